package io.github.deviceplugin4j.testkit;

import java.util.Objects;

/**
 * A device node from a {@code ContainerAllocateResponse}.
 *
 * @param containerPath the path inside the container
 * @param hostPath the path on the host
 * @param permissions the cgroup permissions as sent, any of {@code r}, {@code w}, {@code m}
 */
public record DeviceSpec(String containerPath, String hostPath, String permissions) {
  /**
   * Checks the components.
   *
   * @param containerPath see {@link #containerPath()}
   * @param hostPath see {@link #hostPath()}
   * @param permissions see {@link #permissions()}
   */
  public DeviceSpec {
    Objects.requireNonNull(containerPath, "containerPath");
    Objects.requireNonNull(hostPath, "hostPath");
    Objects.requireNonNull(permissions, "permissions");
  }
}
