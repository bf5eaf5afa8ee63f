package io.github.deviceplugin4j.core;

import java.util.Objects;

/**
 * A host path to bind-mount into a container.
 *
 * @param containerPath absolute path inside the container
 * @param hostPath absolute path on the host
 * @param readOnly whether the mount is read-only
 */
public record Mount(String containerPath, String hostPath, boolean readOnly) {

  /**
   * Checks for nulls; content is validated by the core when the device is published.
   *
   * @param containerPath see {@link #containerPath()}
   * @param hostPath see {@link #hostPath()}
   * @param readOnly see {@link #readOnly()}
   */
  public Mount {
    Objects.requireNonNull(containerPath, "containerPath");
    Objects.requireNonNull(hostPath, "hostPath");
  }

  /**
   * A read-only mount of a host path at the same path in the container.
   *
   * @param path absolute path
   * @return the mount
   */
  public static Mount readOnly(String path) {
    return new Mount(path, path, true);
  }
}
