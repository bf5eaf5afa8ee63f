package io.github.deviceplugin4j.testkit;

import java.util.Objects;

/**
 * A mount from a {@code ContainerAllocateResponse}.
 *
 * @param containerPath the path inside the container
 * @param hostPath the path on the host
 * @param readOnly whether the mount is read-only
 */
public record MountSpec(String containerPath, String hostPath, boolean readOnly) {
  /**
   * Checks the components.
   *
   * @param containerPath see {@link #containerPath()}
   * @param hostPath see {@link #hostPath()}
   * @param readOnly see {@link #readOnly()}
   */
  public MountSpec {
    Objects.requireNonNull(containerPath, "containerPath");
    Objects.requireNonNull(hostPath, "hostPath");
  }
}
