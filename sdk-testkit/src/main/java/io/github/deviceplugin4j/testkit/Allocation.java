package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.internal.ResponseChecks;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The result of one successful {@link FakeKubelet#allocate} call: the devices the kubelet chose and
 * what the plugin's {@code Allocate} answered for the container.
 *
 * @param resourceName the resource
 * @param podUid the pod the devices went to
 * @param containerName the container the devices went to
 * @param deviceIds the device IDs sent in the {@code Allocate} request, in request order
 * @param envs the environment variables the plugin asked for
 * @param mounts the mounts the plugin asked for
 * @param devices the device nodes the plugin asked for
 * @param annotations the annotations the plugin asked for
 * @param cdiDevices the fully qualified CDI device names the plugin asked for
 */
public record Allocation(
    String resourceName,
    String podUid,
    String containerName,
    List<String> deviceIds,
    Map<String, String> envs,
    List<MountSpec> mounts,
    List<DeviceSpec> devices,
    Map<String, String> annotations,
    List<String> cdiDevices) {

  /**
   * Checks the components and copies the collections.
   *
   * @param resourceName see {@link #resourceName()}
   * @param podUid see {@link #podUid()}
   * @param containerName see {@link #containerName()}
   * @param deviceIds see {@link #deviceIds()}
   * @param envs see {@link #envs()}
   * @param mounts see {@link #mounts()}
   * @param devices see {@link #devices()}
   * @param annotations see {@link #annotations()}
   * @param cdiDevices see {@link #cdiDevices()}
   */
  public Allocation {
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(podUid, "podUid");
    Objects.requireNonNull(containerName, "containerName");
    deviceIds = List.copyOf(deviceIds);
    envs = Map.copyOf(envs);
    mounts = List.copyOf(mounts);
    devices = List.copyOf(devices);
    annotations = Map.copyOf(annotations);
    cdiDevices = List.copyOf(cdiDevices);
  }

  /**
   * Checks the response the way a container runtime would need it: absolute container and host
   * paths, permissions made of {@code r}, {@code w}, {@code m}, environment variable names as
   * Kubernetes accepts them ({@code [-._a-zA-Z][-._a-zA-Z0-9]*}) and CDI names of the form {@code
   * vendor.com/class=name}. The kubelet itself passes these on unchecked; a runtime fails later.
   *
   * @return one readable line per problem; empty when the response is well-formed
   */
  public List<String> problems() {
    return ResponseChecks.allocationProblems(envs, mounts, devices, cdiDevices);
  }
}
