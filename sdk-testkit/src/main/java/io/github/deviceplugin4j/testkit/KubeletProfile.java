package io.github.deviceplugin4j.testkit;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Which kubelet's behaviour the {@link FakeKubelet} models where kubelet versions differ. The
 * default is {@link #LATEST}.
 *
 * <p>What differs:
 *
 * <ul>
 *   <li><b>Cleanup on start.</b> v1.26 to v1.33 ({@link #V1_26}, {@link #V1_27}, {@link #V1_32})
 *       delete every entry of the plugin directory that is not a directory, except the checkpoint
 *       {@code kubelet_internal_checkpoint} ({@code CleanupPluginDirectory} in {@code
 *       pkg/kubelet/cm/devicemanager/manager.go}, the same at v1.26.15 and v1.32.10, so taken to be
 *       the same in the releases between); {@link #V1_34} and {@link #LATEST} delete only sockets,
 *       as the newest {@code CleanupPluginDirectory} does (it skips directories and every entry
 *       whose mode is not a socket). Which release first did so was not pinned down: a plugin that
 *       keeps no other file in the directory passes either way.
 *   <li><b>Which connection a stream end closes.</b> Up to v1.36 the kubelet keeps one client per
 *       resource name: when any client's {@code ListAndWatch} ends (also a superseded one) it
 *       disconnects the client <em>currently registered</em> for the name, so the newest connection
 *       is the one closed and the superseded one stays open. Since kubernetes#135437 (merged
 *       2026-05, v1.37) it keeps one client per socket and closes the connection of the client
 *       whose stream ended; the current connection stays open and keeps sending lists. Either way
 *       the kubelet then calls {@code PluginDisconnected(resource)}: the whole resource turns
 *       unhealthy and its current endpoint is stopped until the next registration.
 *   <li><b>DRA {@code supported_versions}.</b> v1.32/v1.33 ({@code
 *       pkg/kubelet/cm/dra/plugin/registration.go}, {@code validateSupportedServices}) know {@code
 *       v1beta1.DRAPlugin} and the alpha {@code v1alpha3.Node}; a registration that lists neither
 *       is accepted and falls back to {@code v1alpha3.Node}, so every prepare and unprepare then
 *       fails {@code Unimplemented} on a driver that does not serve it. v1.34 and newer ({@code
 *       dra_plugin_manager.go}) know {@code v1.DRAPlugin} and {@code v1beta1.DRAPlugin}, take the
 *       first entry of the plugin's list they know, and refuse a registration that lists none. The
 *       fake does not model DRA before v1.32 (the {@code resource.k8s.io} beta API and the v1beta1
 *       kubelet service arrived there): {@link #V1_26} and {@link #V1_27} behave like v1.32 on
 *       their DRA side.
 *   <li><b>DRA claims after a restart.</b> v1.32/v1.33 call {@code NodePrepareResources} again for
 *       claims restored from the DRA manager's checkpoint when their pods are admitted after a
 *       kubelet restart; the other profiles answer those from the restored claim cache.
 * </ul>
 *
 * <p>What does not differ: no profile writes a {@code DEPRECATION} file. The device manager's
 * {@code GetPluginHandler()} writes one, but from v1.26 on nothing calls it (the kubelet registers
 * {@code GetWatcherHandler()}, which returns the plugin server itself); only kubelets older than
 * any profile here did. A fake that writes it makes the kubelet's own stub plugin skip {@code
 * Register}.
 *
 * <p>What {@link #LATEST} models is the per-socket client bookkeeping of kubernetes#135437 with
 * {@code PluginDisconnected} still keyed by resource name, as in the client code we read. If that
 * change also scoped {@code PluginDisconnected} to the plugin instance, {@link #LATEST} is stricter
 * than v1.37 there (it shows an outage v1.37 would not); a plugin that keeps no superseded
 * connection to close passes either way, and must anyway on v1.26 to v1.36.
 */
public enum KubeletProfile {
  /** Kubernetes v1.26: deletes every non-directory file on start; one client per resource. */
  V1_26("1.26", true, false, false, false, false),
  /**
   * Kubernetes v1.27 to v1.31: deletes every non-directory file on start, like v1.26 and v1.32; one
   * client per resource.
   */
  V1_27("1.27", true, false, false, false, false),
  /**
   * Kubernetes v1.32 and v1.33: deletes every non-directory file on start, one client per resource;
   * DRA falls back to {@code v1alpha3.Node} when no listed service is known, and prepares restored
   * claims again after a restart.
   */
  V1_32("1.32", true, false, false, false, true),
  /**
   * Kubernetes v1.34 to v1.36: deletes only sockets on start; one client per resource; DRA refuses
   * a registration that lists no known service.
   */
  V1_34("1.34", false, false, false, true, false),
  /** Kubernetes v1.37 and newer: deletes only sockets; one client per plugin socket. */
  LATEST("latest", false, false, true, true, false);

  private final String version;
  private final boolean deletesAllFiles;
  private final boolean writesDeprecation;
  private final boolean clientPerSocket;
  private final boolean draRejectsUnknown;
  private final boolean draPreparesRestoredClaims;

  KubeletProfile(
      String version,
      boolean deletesAllFiles,
      boolean writesDeprecation,
      boolean clientPerSocket,
      boolean draRejectsUnknown,
      boolean draPreparesRestoredClaims) {
    this.version = version;
    this.deletesAllFiles = deletesAllFiles;
    this.writesDeprecation = writesDeprecation;
    this.clientPerSocket = clientPerSocket;
    this.draRejectsUnknown = draRejectsUnknown;
    this.draPreparesRestoredClaims = draPreparesRestoredClaims;
  }

  /**
   * The profile for a kubelet version as given on the {@code fake-kubelet} command line: {@code
   * 1.26} to {@code 1.37} (each mapped to the profile covering it), or {@code latest}.
   *
   * @param version e.g. {@code 1.26}, {@code 1.33}, {@code latest}
   * @return the profile
   * @throws IllegalArgumentException naming the versions accepted
   */
  public static KubeletProfile forVersion(String version) {
    String v = version == null ? "" : version.trim().toLowerCase(java.util.Locale.ROOT);
    if (v.startsWith("v")) {
      v = v.substring(1);
    }
    if (v.equals("latest")) {
      return LATEST;
    }
    int minor = -1;
    if (v.matches("1\\.\\d{1,3}")) {
      minor = Integer.parseInt(v.substring(2));
    }
    if (minor < 26) {
      throw new IllegalArgumentException(
          "unknown kubelet version '"
              + version
              + "': give 1.26 or newer (e.g. 1.26, 1.32, 1.34) or latest; profiles: "
              + Arrays.stream(values())
                  .map(p -> p + " from " + p.version)
                  .collect(Collectors.joining(", ")));
    }
    if (minor == 26) {
      return V1_26;
    }
    if (minor <= 31) {
      return V1_27;
    }
    if (minor <= 33) {
      return V1_32;
    }
    if (minor <= 36) {
      return V1_34;
    }
    return LATEST;
  }

  /**
   * Whether the kubelet deletes every non-directory file (except its checkpoint) in the plugin
   * directory on start, not only sockets.
   *
   * @return true for v1.26 to v1.33
   */
  public boolean deletesAllFilesOnStart() {
    return deletesAllFiles;
  }

  /**
   * Whether the kubelet creates the {@code DEPRECATION} file in the plugin directory on start.
   * Kubelets from v1.26 on write none (the device manager's {@code GetPluginHandler()}, which
   * writes it, has no caller in {@code pkg/kubelet/cm/devicemanager/manager.go} there), so this is
   * false for every profile.
   *
   * @return false
   */
  public boolean writesDeprecationFile() {
    return writesDeprecation;
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

  /**
   * Whether a DRA registration whose {@code supported_versions} names no service the kubelet knows
   * is refused (true) or accepted on the kubelet's oldest service, {@code v1alpha3.Node} (false).
   *
   * @return true from v1.34
   */
  public boolean refusesUnknownDraServices() {
    return draRejectsUnknown;
  }

  /**
   * Whether DRA claims restored after a kubelet restart are sent to {@code NodePrepareResources}
   * again when a pod using them is admitted.
   *
   * @return true for v1.32/v1.33
   */
  public boolean preparesRestoredDraClaimsAgain() {
    return draPreparesRestoredClaims;
  }
}
