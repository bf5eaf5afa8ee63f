package io.github.deviceplugin4j.core.podresources;

import java.util.Objects;

/**
 * The container a device is assigned to.
 *
 * @param namespace the pod's namespace
 * @param podName the pod's name
 * @param containerName the container's name
 */
public record DeviceOwner(String namespace, String podName, String containerName) {

  /**
   * Checks for nulls.
   *
   * @param namespace see {@link #namespace()}
   * @param podName see {@link #podName()}
   * @param containerName see {@link #containerName()}
   */
  public DeviceOwner {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(podName, "podName");
    Objects.requireNonNull(containerName, "containerName");
  }
}
