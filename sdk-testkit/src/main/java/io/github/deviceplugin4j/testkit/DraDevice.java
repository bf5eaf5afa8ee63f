package io.github.deviceplugin4j.testkit;

import java.util.List;
import java.util.Objects;

/**
 * One device a DRA driver prepared for a claim, as its {@code NodePrepareResources} answer gave it.
 *
 * @param requestNames the claim's requests this device serves; empty means all of them
 * @param poolName the pool of the device in the driver's ResourceSlices
 * @param deviceName the device's name in that pool
 * @param cdiDeviceIds the CDI device IDs ({@code vendor/class=name}) the runtime injects
 */
public record DraDevice(
    List<String> requestNames, String poolName, String deviceName, List<String> cdiDeviceIds) {

  /**
   * Checks and copies the components.
   *
   * @param requestNames see {@link #requestNames()}
   * @param poolName see {@link #poolName()}
   * @param deviceName see {@link #deviceName()}
   * @param cdiDeviceIds see {@link #cdiDeviceIds()}
   */
  public DraDevice {
    requestNames = List.copyOf(requestNames);
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    cdiDeviceIds = List.copyOf(cdiDeviceIds);
  }
}
