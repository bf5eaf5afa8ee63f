package io.github.deviceplugin4j.core.podresources;

import java.util.List;
import java.util.Objects;

/**
 * Devices of one resource, as assigned to a container or reported as allocatable.
 *
 * @param resourceName e.g. {@code vendor.example.com/fpga}
 * @param deviceIds the device IDs
 * @param numaNodes NUMA nodes of the devices, when the kubelet reports topology
 */
public record ContainerDevices(String resourceName, List<String> deviceIds, List<Long> numaNodes) {

  /**
   * Checks for nulls and copies the lists.
   *
   * @param resourceName see {@link #resourceName()}
   * @param deviceIds see {@link #deviceIds()}
   * @param numaNodes see {@link #numaNodes()}
   */
  public ContainerDevices {
    Objects.requireNonNull(resourceName, "resourceName");
    deviceIds = List.copyOf(deviceIds);
    numaNodes = List.copyOf(numaNodes);
  }
}
