package io.github.deviceplugin4j.core;

import java.util.List;
import java.util.Objects;

/**
 * A validated request for one container: the devices the kubelet assigned, all known and healthy.
 *
 * @param resourceName the resource the devices belong to
 * @param devices the devices, in the kubelet's order
 * @param defaultAllocation what the core would answer on its own: the merge of the devices'
 *     allocations; an {@link Allocator} may return it, extend it, or ignore it
 */
public record AllocationRequest(
    String resourceName, List<Device> devices, ContainerAllocation defaultAllocation) {

  /**
   * Checks for nulls and copies the list.
   *
   * @param resourceName see {@link #resourceName()}
   * @param devices see {@link #devices()}
   * @param defaultAllocation see {@link #defaultAllocation()}
   */
  public AllocationRequest {
    Objects.requireNonNull(resourceName, "resourceName");
    devices = List.copyOf(Objects.requireNonNull(devices, "devices"));
    Objects.requireNonNull(defaultAllocation, "defaultAllocation");
  }

  /**
   * The IDs of the requested devices.
   *
   * @return device IDs in request order
   */
  public List<String> deviceIds() {
    return devices.stream().map(Device::id).toList();
  }
}
