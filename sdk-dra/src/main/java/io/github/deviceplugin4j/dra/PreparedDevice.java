package io.github.deviceplugin4j.dra;

import java.util.List;
import java.util.Objects;

/**
 * One device a driver prepared for a claim: where it comes from (pool and device, as published in
 * the ResourceSlices) and the CDI device IDs the container runtime injects.
 *
 * <pre>{@code
 * new PreparedDevice(List.of("fpga"), "node-1", "fpga-0",
 *     List.of("fpga.example.com/fpga=claim-" + claim.uid() + "-fpga-0"))
 * }</pre>
 *
 * @param requestNames the claim's requests this device serves; empty means every request. A
 *     subrequest reference ({@code request/subrequest}) is sent to the kubelet as its request
 * @param poolName the pool that holds the device; not empty
 * @param deviceName the device's name in its pool; not empty
 * @param cdiDeviceIds fully qualified CDI device IDs ({@code vendor/class=name}); may be empty
 */
public record PreparedDevice(
    List<String> requestNames, String poolName, String deviceName, List<String> cdiDeviceIds) {

  /**
   * Checks the device.
   *
   * @param requestNames the claim's requests this device serves
   * @param poolName the pool
   * @param deviceName the device
   * @param cdiDeviceIds the CDI device IDs
   * @throws IllegalArgumentException when the pool or device name is empty, or a CDI device ID is
   *     not of the form {@code vendor/class=name}
   */
  public PreparedDevice {
    requestNames = List.copyOf(Objects.requireNonNull(requestNames, "requestNames"));
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    cdiDeviceIds = List.copyOf(Objects.requireNonNull(cdiDeviceIds, "cdiDeviceIds"));
    if (poolName.isEmpty()) {
      throw new IllegalArgumentException(
          "poolName of device '" + deviceName + "' is empty: name the pool it was published in");
    }
    if (deviceName.isEmpty()) {
      throw new IllegalArgumentException(
          "deviceName in pool '" + poolName + "' is empty: name the device as published");
    }
    for (String id : cdiDeviceIds) {
      int slash = id.indexOf('/');
      int eq = id.indexOf('=');
      if (slash <= 0 || eq <= slash + 1 || eq == id.length() - 1) {
        throw new IllegalArgumentException(
            "CDI device ID '"
                + id
                + "' of device "
                + poolName
                + "/"
                + deviceName
                + " is not fully qualified: use vendor/class=name");
      }
    }
  }

  /**
   * A device that serves every request of its claim.
   *
   * @param poolName the pool
   * @param deviceName the device
   * @param cdiDeviceIds the CDI device IDs
   * @return the device
   */
  public static PreparedDevice of(String poolName, String deviceName, String... cdiDeviceIds) {
    return new PreparedDevice(List.of(), poolName, deviceName, List.of(cdiDeviceIds));
  }
}
