package io.github.deviceplugin4j.examples.common;

import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The options every example DRA driver has beside its name, as a picocli mixin: the node, the
 * kubelet's directories, the CDI directory and the pod's UID.
 *
 * <pre>{@code
 * @Mixin DraOptions dra;
 * ...
 * Path pluginDir = dra.pluginDir(driverName);
 * }</pre>
 */
public final class DraOptions {
  @Option(
      names = "--node-name",
      paramLabel = "NODE",
      defaultValue = "",
      description = "This node's name. Default: NODE_NAME (downward API); required.")
  String nodeName;

  @Option(
      names = "--plugin-dir",
      paramLabel = "DIR",
      description = "The DRA socket's directory. Default: /var/lib/kubelet/plugins/<driver name>.")
  Path pluginDir;

  @Option(
      names = "--registry-dir",
      paramLabel = "DIR",
      defaultValue = "/var/lib/kubelet/plugins_registry",
      description = "The kubelet's plugin watcher directory. Default: ${DEFAULT-VALUE}.")
  Path registryDir;

  @Option(
      names = "--cdi-dir",
      paramLabel = "DIR",
      defaultValue = "/var/run/cdi",
      description = "Where the claims' CDI specs are written. Default: ${DEFAULT-VALUE}.")
  Path cdiDir;

  @Option(
      names = "--pod-uid",
      paramLabel = "UID",
      defaultValue = "",
      description = "The pod's UID, for rolling updates. Default: POD_UID, else none.")
  String podUid;

  /** Creates the options; picocli sets them. */
  public DraOptions() {}

  /**
   * Where options not given come from: these defaults with {@code NODE_NAME} and {@code POD_UID}
   * read after the command's own variables and file.
   *
   * @param defaults the command's defaults
   * @return a copy
   */
  public static EnvironmentDefaults fallbacks(EnvironmentDefaults defaults) {
    return defaults.withFallback("node-name", "NODE_NAME").withFallback("pod-uid", "POD_UID");
  }

  /**
   * This node's name.
   *
   * @return the name; blank when none is set
   */
  public String nodeName() {
    return nodeName;
  }

  /**
   * The DRA socket's directory.
   *
   * @param driverName the driver's name, for the default
   * @return {@code --plugin-dir}, else {@code /var/lib/kubelet/plugins/<driver name>}
   */
  public Path pluginDir(String driverName) {
    return pluginDir != null ? pluginDir : Path.of("/var/lib/kubelet/plugins", driverName);
  }

  /**
   * The kubelet's plugin watcher directory.
   *
   * @return the directory
   */
  public Path registryDir() {
    return registryDir;
  }

  /**
   * Where the claims' CDI specs are written.
   *
   * @return the directory
   */
  public Path cdiDir() {
    return cdiDir;
  }

  /**
   * The pod's UID for rolling updates.
   *
   * @return the UID, or empty
   */
  public Optional<String> podUid() {
    return podUid.isBlank() ? Optional.empty() : Optional.of(podUid);
  }
}
