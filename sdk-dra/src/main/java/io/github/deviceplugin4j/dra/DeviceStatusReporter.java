package io.github.deviceplugin4j.dra;

import io.github.deviceplugin4j.core.Device;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Optional capability of a {@code DeviceBackend} served by {@link BackendDriver}: after a claim is
 * prepared, its devices' status is written into the claim's {@code status.devices} (KEP-4817), so
 * that network plugins and operators see e.g. a VF's interface name and MAC address on the claim.
 * The writes are retried until they land (see {@link
 * io.github.deviceplugin4j.dra.slices.ClaimStatusWriter}).
 *
 * <pre>{@code
 * public DeviceStatus deviceStatus(Device device) {
 *   Vf vf = vfs.get(device.id());
 *   return DeviceStatus.network(vf.netdev(), vf.mac(), List.of());
 * }
 * }</pre>
 */
@FunctionalInterface
public interface DeviceStatusReporter {

  /**
   * The status of a prepared device.
   *
   * @param device the backend's device, just prepared for a claim
   * @return its status, or null to write none
   */
  DeviceStatus deviceStatus(Device device);

  /**
   * What a driver reports about a device on the claim.
   *
   * @param interfaceName the network interface in the pod, e.g. {@code eth1}; null for none
   * @param hardwareAddress the MAC address; null for none
   * @param ips IP addresses with prefix length ({@code 10.0.0.5/24}); at most 16
   * @param data driver-specific data, written as a JSON object; empty for none
   */
  record DeviceStatus(
      String interfaceName, String hardwareAddress, List<String> ips, Map<String, Object> data) {
    /**
     * Copies the list and map.
     *
     * @param interfaceName the interface
     * @param hardwareAddress the hardware address
     * @param ips the addresses
     * @param data the data
     */
    public DeviceStatus {
      ips = List.copyOf(Objects.requireNonNull(ips, "ips"));
      data = Map.copyOf(Objects.requireNonNull(data, "data"));
    }

    /**
     * Network data alone.
     *
     * @param interfaceName the interface
     * @param hardwareAddress the MAC address
     * @param ips the addresses
     * @return the status
     */
    public static DeviceStatus network(
        String interfaceName, String hardwareAddress, List<String> ips) {
      return new DeviceStatus(interfaceName, hardwareAddress, ips, Map.of());
    }
  }
}
