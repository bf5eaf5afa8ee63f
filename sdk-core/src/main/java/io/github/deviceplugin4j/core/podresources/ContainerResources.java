package io.github.deviceplugin4j.core.podresources;

import java.util.List;
import java.util.Objects;

/**
 * The resources the kubelet assigned to one container.
 *
 * @param name the container's name
 * @param devices devices per resource
 * @param cpuIds exclusive CPUs, when the CPU manager assigned any
 */
public record ContainerResources(String name, List<ContainerDevices> devices, List<Long> cpuIds) {

  /**
   * Checks for nulls and copies the lists.
   *
   * @param name see {@link #name()}
   * @param devices see {@link #devices()}
   * @param cpuIds see {@link #cpuIds()}
   */
  public ContainerResources {
    Objects.requireNonNull(name, "name");
    devices = List.copyOf(devices);
    cpuIds = List.copyOf(cpuIds);
  }
}
