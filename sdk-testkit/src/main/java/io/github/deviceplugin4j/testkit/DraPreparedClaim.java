package io.github.deviceplugin4j.testkit;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A claim the fake kubelet holds as prepared (its claim-info cache, kept across restarts like the
 * kubelet's checkpoint).
 *
 * @param driver the driver that prepared it
 * @param claim the claim
 * @param podUids the pods that use it
 * @param devices the devices the driver returned
 */
public record DraPreparedClaim(
    String driver, DraClaim claim, Set<String> podUids, List<DraDevice> devices) {

  /**
   * Checks and copies the components.
   *
   * @param driver see {@link #driver()}
   * @param claim see {@link #claim()}
   * @param podUids see {@link #podUids()}
   * @param devices see {@link #devices()}
   */
  public DraPreparedClaim {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(claim, "claim");
    podUids = Set.copyOf(podUids);
    devices = List.copyOf(devices);
  }
}
