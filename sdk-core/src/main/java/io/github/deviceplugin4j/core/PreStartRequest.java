package io.github.deviceplugin4j.core;

import java.util.List;
import java.util.Objects;

/**
 * What the kubelet sends before a container starts: the container's device IDs, resolved against
 * the devices the plugin advertises now.
 *
 * <p>The kubelet calls PreStartContainer before every start of the container (first start,
 * crash-loop restarts, restarts after a kubelet or plugin restart), possibly long after Allocate,
 * and never checks health first: devices may be unhealthy by now, or no longer advertised at all.
 * The core passes them all on; only the hook decides whether to refuse, and a refusal cannot be
 * repaired by the kubelet (the container does not start until the next attempt).
 *
 * @param resourceName the resource
 * @param devices the known devices, in the kubelet's order, each with its current health
 *     <p>Unknown IDs are text the kubelet sent, checked only for being well-formed (1 to 63
 *     characters, no control characters): never use one as a file name or in a command.
 * @param unknownIds IDs of the request that the plugin does not advertise (any more)
 */
public record PreStartRequest(String resourceName, List<Device> devices, List<String> unknownIds) {

  /**
   * Checks for nulls and copies the lists.
   *
   * @param resourceName see {@link #resourceName()}
   * @param devices see {@link #devices()}
   * @param unknownIds see {@link #unknownIds()}
   */
  public PreStartRequest {
    Objects.requireNonNull(resourceName, "resourceName");
    devices = List.copyOf(Objects.requireNonNull(devices, "devices"));
    unknownIds = List.copyOf(Objects.requireNonNull(unknownIds, "unknownIds"));
  }

  /**
   * The known devices that are unhealthy now.
   *
   * @return devices in the kubelet's order; empty when all are healthy
   */
  public List<Device> unhealthy() {
    return devices.stream().filter(d -> !d.isHealthy()).toList();
  }

  /**
   * Whether every device is known and healthy.
   *
   * @return true when there is nothing unusual about the request
   */
  public boolean allKnownAndHealthy() {
    return unknownIds.isEmpty() && devices.stream().allMatch(Device::isHealthy);
  }
}
