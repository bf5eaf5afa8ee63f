package io.github.deviceplugin4j.examples.fpgadra;

import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.fpga.FpgaBackend;
import io.github.deviceplugin4j.examples.fpga.FpgaConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of the FPGA DRA driver ({@link FpgaDraDriver}).
 *
 * <table>
 * <caption>Settings; flags win over environment variables, which win over the file</caption>
 * <tr><th>key / flag</th><th>environment</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code --root}</td><td>{@code FPGA_ROOT}</td><td>{@code /}</td>
 *     <td>where {@code sys/} and {@code dev/} are found</td></tr>
 * <tr><td>{@code --driver-name}</td><td>{@code FPGA_DRIVER_NAME}</td>
 *     <td>{@code fpga.example.com}</td><td>the DRA driver's name (DeviceClass, ResourceSlices, CDI
 *     vendor)</td></tr>
 * <tr><td>{@code --node-name}</td><td>{@code FPGA_NODE_NAME}, else {@code NODE_NAME}</td>
 *     <td>none: required</td><td>this node's name, also the pool's</td></tr>
 * <tr><td>{@code --poll-interval}</td><td>{@code FPGA_POLL_INTERVAL}</td><td>{@code 5s}</td>
 *     <td>how often sysfs is read again</td></tr>
 * <tr><td>{@code --plugin-dir}</td><td>{@code FPGA_PLUGIN_DIR}</td>
 *     <td>{@code /var/lib/kubelet/plugins/<driver name>}</td>
 *     <td>the DRA socket, checkpoint and lock</td></tr>
 * <tr><td>{@code --registry-dir}</td><td>{@code FPGA_REGISTRY_DIR}</td>
 *     <td>{@code /var/lib/kubelet/plugins_registry}</td><td>the kubelet's plugin watcher
 *     directory</td></tr>
 * <tr><td>{@code --cdi-dir}</td><td>{@code FPGA_CDI_DIR}</td><td>{@code /var/run/cdi}</td>
 *     <td>where the claims' CDI specs are written</td></tr>
 * <tr><td>{@code --pod-uid}</td><td>{@code FPGA_POD_UID}</td><td>none</td>
 *     <td>when set, sockets carry the pod's UID so old and new pods overlap during a rolling
 *     update</td></tr>
 * <tr><td>{@code --config}</td><td>{@code FPGA_CONFIG}</td><td>none</td>
 *     <td>a properties file with the keys above (without {@code --})</td></tr>
 * </table>
 *
 * @param root the root directory ({@code /} on a node)
 * @param driverName the DRA driver's name
 * @param nodeName this node's name
 * @param pollInterval how often sysfs is read again
 * @param pluginDir the plugin directory
 * @param registryDir the plugin registry directory
 * @param cdiDir the CDI spec directory
 * @param podUid the pod's UID for rolling updates, or empty
 */
public record FpgaDraConfig(
    Path root,
    String driverName,
    String nodeName,
    Duration pollInterval,
    Path pluginDir,
    Path registryDir,
    Path cdiDir,
    Optional<String> podUid) {

  /** The driver name used when none is given. */
  public static final String DEFAULT_DRIVER_NAME = "fpga.example.com";

  /**
   * Checks for nulls, a node name and a positive poll interval.
   *
   * @param root see {@link #root()}
   * @param driverName see {@link #driverName()}
   * @param nodeName see {@link #nodeName()}
   * @param pollInterval see {@link #pollInterval()}
   * @param pluginDir see {@link #pluginDir()}
   * @param registryDir see {@link #registryDir()}
   * @param cdiDir see {@link #cdiDir()}
   * @param podUid see {@link #podUid()}
   */
  public FpgaDraConfig {
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(driverName, "driverName");
    Objects.requireNonNull(nodeName, "nodeName");
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(pluginDir, "pluginDir");
    Objects.requireNonNull(registryDir, "registryDir");
    Objects.requireNonNull(cdiDir, "cdiDir");
    Objects.requireNonNull(podUid, "podUid");
    if (nodeName.isBlank()) {
      throw new IllegalArgumentException(
          "the node name is missing: set NODE_NAME from the downward API (fieldRef"
              + " spec.nodeName), FPGA_NODE_NAME or --node-name");
    }
    if (pollInterval.isNegative() || pollInterval.isZero()) {
      throw new IllegalArgumentException("pollInterval must be positive, was " + pollInterval);
    }
  }

  /**
   * Reads the settings from flags, environment variables and an optional file, as the driver's
   * command line does ({@link FpgaDraCommand}).
   *
   * @param args command-line flags, {@code --key=value} or {@code --key value}
   * @param env the environment, usually {@link System#getenv()}
   * @return the settings
   * @throws IllegalArgumentException naming the bad flag, key or value, or the missing node name
   */
  public static FpgaDraConfig parse(String[] args, Map<String, String> env) {
    return PluginCli.parse(new FpgaDraCommand(), FpgaDraCommand.defaults(env), args).config();
  }

  /**
   * The settings the port scanning shares with the device plugin ({@link FpgaBackend}).
   *
   * @return the device plugin's settings with this root, poll interval and the driver name as
   *     domain
   */
  public FpgaConfig backendConfig() {
    FpgaConfig d = FpgaConfig.defaults(root);
    return new FpgaConfig(root, d.mode(), driverName, pollInterval, d.readyFile());
  }
}
