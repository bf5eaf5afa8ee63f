package io.github.deviceplugin4j.testkit;

import java.util.List;
import java.util.Objects;

/**
 * A DRA driver's answer for one claim: the devices it prepared, or its per-claim error.
 *
 * @param devices the prepared devices (empty for an unprepare answer or an error)
 * @param error the driver's per-claim error; empty when the claim succeeded
 */
public record DraClaimResult(List<DraDevice> devices, String error) {

  /**
   * Checks and copies the components.
   *
   * @param devices see {@link #devices()}
   * @param error see {@link #error()}
   */
  public DraClaimResult {
    devices = List.copyOf(devices);
    Objects.requireNonNull(error, "error");
  }

  /**
   * Whether the driver reported no error for this claim.
   *
   * @return true when {@link #error()} is empty
   */
  public boolean ok() {
    return error.isEmpty();
  }
}
