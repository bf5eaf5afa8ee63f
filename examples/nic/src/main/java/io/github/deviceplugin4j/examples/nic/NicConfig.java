package io.github.deviceplugin4j.examples.nic;

import io.github.deviceplugin4j.examples.common.MetricsAddress;
import io.github.deviceplugin4j.examples.common.PluginCli;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Settings of the SR-IOV NIC plugin.
 *
 * <table>
 * <caption>Settings; flags win over environment variables, which win over the file</caption>
 * <tr><th>key / flag</th><th>environment</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code --config}</td><td>{@code NIC_CONFIG}</td>
 *     <td>{@code /etc/deviceplugin4j/nic.properties}</td><td>the properties file with the pools</td></tr>
 * <tr><td>{@code --root}</td><td>{@code NIC_ROOT}</td><td>{@code /}</td>
 *     <td>where {@code sys/} and {@code dev/} are found</td></tr>
 * <tr><td>{@code --domain}</td><td>{@code NIC_DOMAIN}</td><td>{@code nic.example.com}</td>
 *     <td>domain of the resource names</td></tr>
 * <tr><td>{@code --devinfo-dir}</td><td>{@code NIC_DEVINFO_DIR}</td>
 *     <td>{@code /var/run/k8s.cni.cncf.io/devinfo/dp}</td>
 *     <td>where device-info files for SR-IOV CNI are written</td></tr>
 * <tr><td>{@code --poll-interval}</td><td>{@code NIC_POLL_INTERVAL}</td><td>{@code 5s}</td>
 *     <td>how often sysfs is read again</td></tr>
 * <tr><td>{@code --ready-file}</td><td>{@code NIC_READY_FILE}</td>
 *     <td>{@code /tmp/deviceplugin4j.ready}</td><td>written once every pool is registered</td></tr>
 * <tr><td>{@code --metrics-address}</td><td>{@code NIC_METRICS_ADDRESS}, {@code METRICS_ADDRESS}</td>
 *     <td>none ({@code :9400} in the image)</td>
 *     <td>{@code [host]:port} of the HTTP endpoint: {@code /metrics}, {@code /healthz},
 *     {@code /readyz}; see {@link MetricsAddress}</td></tr>
 * <tr><td>{@code pool.<name>.pf-names}</td><td>-</td><td>-</td>
 *     <td>one resource {@code <domain>/<name>}; see {@link NicPool} for its other keys</td></tr>
 * </table>
 *
 * @param root the root directory ({@code /} on a node)
 * @param domain the resource names' domain
 * @param pools the pools, one resource each
 * @param devInfoDir the device-info directory
 * @param pollInterval how often sysfs is read again
 * @param readyFile the readiness file
 * @param metricsAddress where the HTTP endpoint listens; empty for none
 */
public record NicConfig(
    Path root,
    String domain,
    List<NicPool> pools,
    Path devInfoDir,
    Duration pollInterval,
    Path readyFile,
    Optional<InetSocketAddress> metricsAddress) {

  /** The directory SR-IOV-aware CNI plugins read device-info files from. */
  public static final Path DEVINFO_DIR = Path.of("/var/run/k8s.cni.cncf.io/devinfo/dp");

  /**
   * Checks for nulls, at least one pool, and a positive poll interval.
   *
   * @param root see {@link #root()}
   * @param domain see {@link #domain()}
   * @param pools see {@link #pools()}
   * @param devInfoDir see {@link #devInfoDir()}
   * @param pollInterval see {@link #pollInterval()}
   * @param readyFile see {@link #readyFile()}
   * @param metricsAddress see {@link #metricsAddress()}
   */
  public NicConfig {
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(domain, "domain");
    pools = List.copyOf(pools);
    Objects.requireNonNull(devInfoDir, "devInfoDir");
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(readyFile, "readyFile");
    Objects.requireNonNull(metricsAddress, "metricsAddress");
    if (pools.isEmpty()) {
      throw new IllegalArgumentException(
          "no pool configured: add pool.<name>.pf-names=<pf>[,<pf>...] to the config file");
    }
    if (pollInterval.isNegative() || pollInterval.isZero()) {
      throw new IllegalArgumentException("pollInterval must be positive, was " + pollInterval);
    }
  }

  /**
   * Settings without an HTTP endpoint.
   *
   * @param root see {@link #root()}
   * @param domain see {@link #domain()}
   * @param pools see {@link #pools()}
   * @param devInfoDir see {@link #devInfoDir()}
   * @param pollInterval see {@link #pollInterval()}
   * @param readyFile see {@link #readyFile()}
   */
  public NicConfig(
      Path root,
      String domain,
      List<NicPool> pools,
      Path devInfoDir,
      Duration pollInterval,
      Path readyFile) {
    this(root, domain, pools, devInfoDir, pollInterval, readyFile, Optional.empty());
  }

  /**
   * The defaults with a root, pools and a device-info directory (what tests and the demo use).
   *
   * @param root the root directory
   * @param devInfoDir the device-info directory
   * @param pools the pools
   * @return the settings
   */
  public static NicConfig of(Path root, Path devInfoDir, NicPool... pools) {
    return new NicConfig(
        root,
        "nic.example.com",
        List.of(pools),
        devInfoDir,
        Duration.ofSeconds(5),
        Path.of("/tmp/deviceplugin4j.ready"));
  }

  /**
   * Reads the settings from flags, environment variables and the config file, as the plugin's
   * command line does ({@link NicPlugin}).
   *
   * @param args command-line flags, {@code --key=value} or {@code --key value}
   * @param env the environment, usually {@link System#getenv()}
   * @return the settings
   * @throws IllegalArgumentException naming the bad flag, key or value
   */
  public static NicConfig parse(String[] args, Map<String, String> env) {
    return PluginCli.parse(new NicPlugin(), NicPlugin.defaults(env), args).config();
  }

  /**
   * The pools of {@code pool.<name>.<setting>} keys.
   *
   * @param keys the keys with their values
   * @return the pools, by name
   * @throws IllegalArgumentException naming a key that is not a pool setting
   */
  static List<NicPool> pools(Map<String, String> keys) {
    Map<String, Map<String, String>> byPool = new TreeMap<>();
    keys.forEach(
        (key, value) -> {
          String rest = key.substring("pool.".length());
          int dot = rest.lastIndexOf('.');
          if (dot <= 0) {
            throw new IllegalArgumentException(
                "pool key '" + key + "' must look like pool.<name>.<setting>");
          }
          String setting = rest.substring(dot + 1);
          if (!List.of("pf-names", "vendors", "devices", "drivers").contains(setting)) {
            throw new IllegalArgumentException(
                "unknown pool setting '" + key + "'; known: pf-names, vendors, devices, drivers");
          }
          byPool
              .computeIfAbsent(rest.substring(0, dot), n -> new LinkedHashMap<>())
              .put(setting, value);
        });
    List<NicPool> pools = new ArrayList<>();
    byPool.forEach(
        (name, settings) ->
            pools.add(
                new NicPool(
                    name,
                    list(settings.get("pf-names")),
                    list(settings.get("vendors")),
                    list(settings.get("devices")),
                    list(settings.get("drivers")))));
    return pools;
  }

  /**
   * The resource name of a pool.
   *
   * @param pool the pool
   * @return {@code <domain>/<pool name>}
   */
  public String resourceName(NicPool pool) {
    return domain + "/" + pool.name();
  }

  private static List<String> list(String value) {
    if (value == null || value.isBlank()) {
      return List.of();
    }
    return Arrays.stream(value.split(",")).map(String::trim).filter(v -> !v.isEmpty()).toList();
  }
}
