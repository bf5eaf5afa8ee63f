package io.github.deviceplugin4j.dra.testkit;

/**
 * A claim that the test cluster's scheduler ({@link DraScheduler}) cannot allocate, with why: no
 * device matches, all are allocated or tainted, a counter or a capacity is used up, a DeviceClass
 * is missing, a selector fails.
 */
public final class DraAllocationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The claim, as {@code namespace/name}; empty when the failure is not about one claim. */
  private final String claim;

  /**
   * Creates the exception.
   *
   * @param claim the claim as {@code namespace/name}, or empty
   * @param reason why it cannot be allocated
   */
  public DraAllocationException(String claim, String reason) {
    super(claim.isEmpty() ? reason : "cannot allocate claim " + claim + ": " + reason);
    this.claim = claim;
  }

  /**
   * The claim that could not be allocated.
   *
   * @return {@code namespace/name}, or empty
   */
  public String claim() {
    return claim;
  }
}
