package io.github.deviceplugin4j.core;

/**
 * The backend failed or did not answer in time during one operation ({@code Allocate}, {@code
 * GetPreferredAllocation}, {@code PreStartContainer}, {@code devices}, {@code start}). Only that
 * operation fails; the plugin keeps serving. The kubelet sees {@code DEADLINE_EXCEEDED} when the
 * backend timed out, otherwise {@code INTERNAL}.
 */
public class BackendException extends DevicePluginException {

  private static final long serialVersionUID = 1L;

  /** The operation that failed, e.g. {@code "Allocate"}. */
  private final String operation;

  /** Whether the backend did not answer within the configured timeout. */
  private final boolean timedOut;

  /**
   * A backend failure.
   *
   * @param operation the operation that failed, e.g. {@code "Allocate"}
   * @param message what went wrong
   * @param cause the backend's exception, or null
   */
  public BackendException(String operation, String message, Throwable cause) {
    this(operation, message, cause, false);
  }

  /**
   * A backend failure or timeout.
   *
   * @param operation the operation that failed, e.g. {@code "Allocate"}
   * @param message what went wrong
   * @param cause the backend's exception, or null
   * @param timedOut whether the backend did not answer within the configured timeout
   */
  public BackendException(String operation, String message, Throwable cause, boolean timedOut) {
    super(message, cause);
    this.operation = operation;
    this.timedOut = timedOut;
  }

  /**
   * The operation that failed.
   *
   * @return e.g. {@code "Allocate"}
   */
  public String operation() {
    return operation;
  }

  /**
   * Whether the backend did not answer in time.
   *
   * @return true for a timeout
   */
  public boolean timedOut() {
    return timedOut;
  }
}
