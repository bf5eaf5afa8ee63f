package io.github.deviceplugin4j.testkit;

/**
 * Which kubelet's behaviour the {@link FakeKubelet} models where kubelet versions differ. The
 * default is {@link #LATEST}.
 *
 * <p>What differs:
 *
 * <ul>
 *   <li><b>Cleanup on start.</b> v1.26 deletes every file in the plugin directory that is not a
 *       directory, except its checkpoint {@code kubelet_internal_checkpoint}; newer kubelets delete
 *       only sockets.
 *   <li><b>Which connection a stream end closes.</b> Up to v1.36 the kubelet keeps one client per
 *       resource name: when any client's {@code ListAndWatch} ends (also a superseded one) it
 *       disconnects the client <em>currently registered</em> for the name, so the newest connection
 *       is the one closed and the superseded one stays open. Since kubernetes#135437 (merged
 *       2026-05, v1.37) it keeps one client per socket and closes the connection of the client
 *       whose stream ended; the current connection stays open and keeps sending lists. Either way
 *       the kubelet then calls {@code PluginDisconnected(resource)}: the whole resource turns
 *       unhealthy and its current endpoint is stopped until the next registration.
 * </ul>
 *
 * <p>What {@link #LATEST} models is the per-socket client bookkeeping of kubernetes#135437 with
 * {@code PluginDisconnected} still keyed by resource name, as in the client code we read. If that
 * change also scoped {@code PluginDisconnected} to the plugin instance, {@link #LATEST} is stricter
 * than v1.37 there (it shows an outage v1.37 would not); a plugin that keeps no superseded
 * connection to close passes either way, and must anyway on v1.26 to v1.36.
 */
public enum KubeletProfile {
  /** Kubernetes v1.26: deletes every non-directory file on start; one client per resource. */
  V1_26(true, false),
  /** Kubernetes v1.27 to v1.36: deletes only sockets on start; one client per resource. */
  V1_27(false, false),
  /** Kubernetes v1.37 and newer: deletes only sockets; one client per plugin socket. */
  LATEST(false, true);

  private final boolean deletesAllFiles;
  private final boolean clientPerSocket;

  KubeletProfile(boolean deletesAllFiles, boolean clientPerSocket) {
    this.deletesAllFiles = deletesAllFiles;
    this.clientPerSocket = clientPerSocket;
  }

  /**
   * Whether the kubelet deletes every non-directory file (except its checkpoint) in the plugin
   * directory on start, not only sockets.
   *
   * @return true for v1.26
   */
  public boolean deletesAllFilesOnStart() {
    return deletesAllFiles;
  }

  /**
   * Whether a stream end disconnects the client whose stream ended (true) or the client currently
   * registered for the resource name (false).
   *
   * @return true from v1.37
   */
  public boolean disconnectsTheEndedClient() {
    return clientPerSocket;
  }
}
