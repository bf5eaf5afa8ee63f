package io.github.deviceplugin4j.examples.infiniband;

import io.github.deviceplugin4j.examples.common.MetricsAddress;
import io.github.deviceplugin4j.examples.common.PluginCli;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of the InfiniBand/RDMA plugin.
 *
 * <table>
 * <caption>Settings; flags win over environment variables, which win over the file</caption>
 * <tr><th>key / flag</th><th>environment</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code --root}</td><td>{@code IB_ROOT}</td><td>{@code /}</td>
 *     <td>where {@code sys/} and {@code dev/} are found</td></tr>
 * <tr><td>{@code --mode}</td><td>{@code IB_MODE}</td><td>{@code exclusive}</td>
 *     <td>{@code exclusive}: one device per HCA; {@code shared}: {@code slots} devices per HCA</td></tr>
 * <tr><td>{@code --slots}</td><td>{@code IB_SLOTS}</td><td>{@code 8}</td>
 *     <td>containers that may share one HCA (shared mode)</td></tr>
 * <tr><td>{@code --domain}</td><td>{@code IB_DOMAIN}</td><td>{@code rdma.example.com}</td>
 *     <td>domain of the resource name</td></tr>
 * <tr><td>{@code --resource}</td><td>{@code IB_RESOURCE}</td>
 *     <td>{@code hca} (exclusive), {@code hca_shared} (shared)</td><td>the resource name's part</td></tr>
 * <tr><td>{@code --hcas}</td><td>{@code IB_HCAS}</td><td>all</td>
 *     <td>comma-separated RDMA device names to serve, e.g. {@code mlx5_0,mlx5_1}</td></tr>
 * <tr><td>{@code --poll-interval}</td><td>{@code IB_POLL_INTERVAL}</td><td>{@code 5s}</td>
 *     <td>how often sysfs is read again</td></tr>
 * <tr><td>{@code --ready-file}</td><td>{@code IB_READY_FILE}</td>
 *     <td>{@code /tmp/deviceplugin4j.ready}</td><td>written once the resource is registered</td></tr>
 * <tr><td>{@code --metrics-address}</td><td>{@code IB_METRICS_ADDRESS}, {@code METRICS_ADDRESS}</td>
 *     <td>none ({@code :9400} in the image)</td>
 *     <td>{@code [host]:port} of the HTTP endpoint: {@code /metrics}, {@code /healthz},
 *     {@code /readyz}; see {@link MetricsAddress}</td></tr>
 * <tr><td>{@code --config}</td><td>{@code IB_CONFIG}</td><td>none</td>
 *     <td>a properties file with the keys above (without {@code --})</td></tr>
 * </table>
 *
 * @param root the root directory ({@code /} on a node)
 * @param mode exclusive or shared
 * @param slots devices per HCA in shared mode (1 in exclusive mode)
 * @param domain the resource name's domain
 * @param resource the resource name's part after the domain
 * @param hcas the HCAs to serve; empty for all
 * @param pollInterval how often sysfs is read again
 * @param readyFile the readiness file
 * @param metricsAddress where the HTTP endpoint listens; empty for none
 */
public record InfinibandConfig(
    Path root,
    Mode mode,
    int slots,
    String domain,
    String resource,
    List<String> hcas,
    Duration pollInterval,
    Path readyFile,
    Optional<InetSocketAddress> metricsAddress) {

  /** How HCAs become devices. */
  public enum Mode {
    /** One device per HCA: a container gets whole HCAs. */
    EXCLUSIVE,
    /** {@code slots} devices per HCA: up to that many containers share one HCA. */
    SHARED
  }

  /**
   * Checks for nulls and ranges.
   *
   * @param root see {@link #root()}
   * @param mode see {@link #mode()}
   * @param slots see {@link #slots()}
   * @param domain see {@link #domain()}
   * @param resource see {@link #resource()}
   * @param hcas see {@link #hcas()}
   * @param pollInterval see {@link #pollInterval()}
   * @param readyFile see {@link #readyFile()}
   * @param metricsAddress see {@link #metricsAddress()}
   */
  public InfinibandConfig {
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(domain, "domain");
    Objects.requireNonNull(resource, "resource");
    hcas = List.copyOf(hcas);
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(readyFile, "readyFile");
    Objects.requireNonNull(metricsAddress, "metricsAddress");
    if (slots < 1 || slots > 1000) {
      throw new IllegalArgumentException("slots must be between 1 and 1000, was " + slots);
    }
    if (mode == Mode.EXCLUSIVE && slots != 1) {
      throw new IllegalArgumentException(
          "slots only applies to shared mode; leave it at 1 for exclusive");
    }
    if (pollInterval.isNegative() || pollInterval.isZero()) {
      throw new IllegalArgumentException("pollInterval must be positive, was " + pollInterval);
    }
  }

  /**
   * Settings without an HTTP endpoint.
   *
   * @param root see {@link #root()}
   * @param mode see {@link #mode()}
   * @param slots see {@link #slots()}
   * @param domain see {@link #domain()}
   * @param resource see {@link #resource()}
   * @param hcas see {@link #hcas()}
   * @param pollInterval see {@link #pollInterval()}
   * @param readyFile see {@link #readyFile()}
   */
  public InfinibandConfig(
      Path root,
      Mode mode,
      int slots,
      String domain,
      String resource,
      List<String> hcas,
      Duration pollInterval,
      Path readyFile) {
    this(root, mode, slots, domain, resource, hcas, pollInterval, readyFile, Optional.empty());
  }

  /**
   * The defaults in exclusive mode, with another root (what tests and the demo use).
   *
   * @param root the root directory
   * @return the settings
   */
  public static InfinibandConfig exclusive(Path root) {
    return new InfinibandConfig(
        root,
        Mode.EXCLUSIVE,
        1,
        "rdma.example.com",
        "hca",
        List.of(),
        Duration.ofSeconds(5),
        Path.of("/tmp/deviceplugin4j.ready"));
  }

  /**
   * The defaults in shared mode, with another root and slot count.
   *
   * @param root the root directory
   * @param slots containers per HCA
   * @return the settings
   */
  public static InfinibandConfig shared(Path root, int slots) {
    return new InfinibandConfig(
        root,
        Mode.SHARED,
        slots,
        "rdma.example.com",
        "hca_shared",
        List.of(),
        Duration.ofSeconds(5),
        Path.of("/tmp/deviceplugin4j.ready"));
  }

  /**
   * Reads the settings from flags, environment variables and an optional file, as the plugin's
   * command line does ({@link InfinibandPlugin}).
   *
   * @param args command-line flags, {@code --key=value} or {@code --key value}
   * @param env the environment, usually {@link System#getenv()}
   * @return the settings
   * @throws IllegalArgumentException naming the bad flag, key or value
   */
  public static InfinibandConfig parse(String[] args, Map<String, String> env) {
    return PluginCli.parse(new InfinibandPlugin(), InfinibandPlugin.defaults(env), args).config();
  }

  /**
   * These settings serving only some HCAs.
   *
   * @param names RDMA device names; empty for all
   * @return a copy with {@code hcas} replaced
   */
  public InfinibandConfig withHcas(List<String> names) {
    return new InfinibandConfig(
        root, mode, slots, domain, resource, names, pollInterval, readyFile, metricsAddress);
  }

  /**
   * These settings with another poll interval.
   *
   * @param interval how often sysfs is read again
   * @return a copy with {@code pollInterval} replaced
   */
  public InfinibandConfig withPollInterval(Duration interval) {
    return new InfinibandConfig(
        root, mode, slots, domain, resource, hcas, interval, readyFile, metricsAddress);
  }

  /**
   * The resource name.
   *
   * @return {@code <domain>/<resource>}
   */
  public String resourceName() {
    return domain + "/" + resource;
  }
}
