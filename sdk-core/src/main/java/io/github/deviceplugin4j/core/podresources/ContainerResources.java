package io.github.deviceplugin4j.core.podresources;

import java.util.List;
import java.util.Objects;

/**
 * The resources the kubelet assigned to one container.
 *
 * @param name the container's name
 * @param devices devices per resource (device plugins)
 * @param cpuIds exclusive CPUs, when the CPU manager assigned any
 * @param dynamicResources the DRA claims the container uses, with their devices
 */
public record ContainerResources(
    String name,
    List<ContainerDevices> devices,
    List<Long> cpuIds,
    List<DynamicResource> dynamicResources) {

  /**
   * Checks for nulls and copies the lists.
   *
   * @param name see {@link #name()}
   * @param devices see {@link #devices()}
   * @param cpuIds see {@link #cpuIds()}
   * @param dynamicResources see {@link #dynamicResources()}
   */
  public ContainerResources {
    Objects.requireNonNull(name, "name");
    devices = List.copyOf(devices);
    cpuIds = List.copyOf(cpuIds);
    dynamicResources = List.copyOf(dynamicResources);
  }

  /**
   * A container without DRA claims (the form before dynamic resources were reported).
   *
   * @param name see {@link #name()}
   * @param devices see {@link #devices()}
   * @param cpuIds see {@link #cpuIds()}
   */
  public ContainerResources(String name, List<ContainerDevices> devices, List<Long> cpuIds) {
    this(name, devices, cpuIds, List.of());
  }
}
