package io.github.deviceplugin4j.core.podresources;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One device of a DRA claim as the kubelet reports it: the driver that prepared it, its pool and
 * name in the driver's ResourceSlices, and the CDI device IDs the driver returned. A DRA driver's
 * exporter maps its devices to pods with it, as device-plugin exporters use {@link
 * ContainerDevices}.
 *
 * <p>Kubelets list, for each device, the CDI IDs of the devices of the same driver listed before it
 * in the claim too ({@code GetDynamicResources} in {@code
 * pkg/kubelet/cm/container_manager_linux.go} collects them in one list per driver): match devices
 * by driver, pool and name, not by CDI IDs.
 *
 * @param driverName the DRA driver
 * @param poolName the device's pool
 * @param deviceName the device's name in its pool
 * @param cdiDeviceIds CDI device IDs ({@code vendor/class=name})
 * @param shareId the share of a device allocated to several claims (consumable capacity), if any
 */
public record ClaimResource(
    String driverName,
    String poolName,
    String deviceName,
    List<String> cdiDeviceIds,
    Optional<String> shareId) {

  /**
   * Checks for nulls and copies the list.
   *
   * @param driverName see {@link #driverName()}
   * @param poolName see {@link #poolName()}
   * @param deviceName see {@link #deviceName()}
   * @param cdiDeviceIds see {@link #cdiDeviceIds()}
   * @param shareId see {@link #shareId()}
   */
  public ClaimResource {
    Objects.requireNonNull(driverName, "driverName");
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    cdiDeviceIds = List.copyOf(cdiDeviceIds);
    Objects.requireNonNull(shareId, "shareId");
  }
}
