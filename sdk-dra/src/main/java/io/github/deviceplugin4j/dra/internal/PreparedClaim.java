package io.github.deviceplugin4j.dra.internal;

import io.github.deviceplugin4j.dra.Claim;
import io.github.deviceplugin4j.dra.PreparedDevice;
import java.util.List;

/**
 * A claim as recorded in the checkpoint: prepared, with the devices the driver returned.
 *
 * @param claim the claim
 * @param devices its devices
 */
public record PreparedClaim(Claim claim, List<PreparedDevice> devices) {

  /**
   * Copies the devices.
   *
   * @param claim the claim
   * @param devices its devices
   */
  public PreparedClaim {
    devices = List.copyOf(devices);
  }
}
