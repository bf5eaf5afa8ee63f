package io.github.deviceplugin4j.core;

import java.util.Objects;

/**
 * A device node (character or block device) to make available in a container.
 *
 * <p>Paths must be absolute; permissions are a non-empty combination of {@code r}, {@code w} and
 * {@code m} (mknod). The core validates both before anything reaches the kubelet.
 *
 * @param containerPath where the node appears inside the container
 * @param hostPath the node on the host
 * @param permissions cgroup device permissions, e.g. {@code "rw"}
 */
public record DeviceNode(String containerPath, String hostPath, String permissions) {

  /**
   * Checks for nulls; content is validated by the core when the device is published.
   *
   * @param containerPath see {@link #containerPath()}
   * @param hostPath see {@link #hostPath()}
   * @param permissions see {@link #permissions()}
   */
  public DeviceNode {
    Objects.requireNonNull(containerPath, "containerPath");
    Objects.requireNonNull(hostPath, "hostPath");
    Objects.requireNonNull(permissions, "permissions");
  }

  /**
   * The host node at the same path in the container, read-write.
   *
   * @param path absolute path, e.g. {@code /dev/dfl-port.0}
   * @return the device node
   */
  public static DeviceNode rw(String path) {
    return new DeviceNode(path, path, "rw");
  }

  /**
   * The host node at the same path in the container with the given permissions.
   *
   * @param path absolute path
   * @param permissions combination of {@code r}, {@code w}, {@code m}
   * @return the device node
   */
  public static DeviceNode of(String path, String permissions) {
    return new DeviceNode(path, path, permissions);
  }
}
