package io.github.deviceplugin4j.core;

import java.util.List;
import java.util.Objects;

/**
 * The kubelet's question before an allocation: which {@code size} devices, from {@code available},
 * including all of {@code mustInclude}, would the plugin prefer?
 *
 * @param resourceName the resource
 * @param available devices the kubelet may choose from (known to the core, in the kubelet's order)
 * @param mustInclude devices that must be part of the answer; a subset of {@code available}
 * @param size how many devices the answer should hold
 */
public record PreferredAllocationRequest(
    String resourceName, List<Device> available, List<Device> mustInclude, int size) {

  /**
   * Checks for nulls and copies the lists.
   *
   * @param resourceName see {@link #resourceName()}
   * @param available see {@link #available()}
   * @param mustInclude see {@link #mustInclude()}
   * @param size see {@link #size()}
   */
  public PreferredAllocationRequest {
    Objects.requireNonNull(resourceName, "resourceName");
    available = List.copyOf(Objects.requireNonNull(available, "available"));
    mustInclude = List.copyOf(Objects.requireNonNull(mustInclude, "mustInclude"));
  }

  /**
   * IDs of the available devices.
   *
   * @return device IDs in the kubelet's order
   */
  public List<String> availableIds() {
    return available.stream().map(Device::id).toList();
  }

  /**
   * IDs of the devices that must be included.
   *
   * @return device IDs in the kubelet's order
   */
  public List<String> mustIncludeIds() {
    return mustInclude.stream().map(Device::id).toList();
  }
}
