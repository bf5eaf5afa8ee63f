package io.github.deviceplugin4j.examples.fpga;

import io.github.deviceplugin4j.examples.common.MetricsAddress;
import io.github.deviceplugin4j.examples.common.PluginCli;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of the FPGA plugin.
 *
 * <table>
 * <caption>Settings; flags win over environment variables, which win over the file</caption>
 * <tr><th>key / flag</th><th>environment</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code --root}</td><td>{@code FPGA_ROOT}</td><td>{@code /}</td>
 *     <td>where {@code sys/} and {@code dev/} are found</td></tr>
 * <tr><td>{@code --mode}</td><td>{@code FPGA_MODE}</td><td>{@code af}</td>
 *     <td>{@code af}: one resource per accelerator function ID; {@code region}: one per region
 *     interface ID</td></tr>
 * <tr><td>{@code --domain}</td><td>{@code FPGA_DOMAIN}</td><td>{@code fpga.example.com}</td>
 *     <td>domain of the resource names</td></tr>
 * <tr><td>{@code --poll-interval}</td><td>{@code FPGA_POLL_INTERVAL}</td><td>{@code 5s}</td>
 *     <td>how often sysfs is read again</td></tr>
 * <tr><td>{@code --ready-file}</td><td>{@code FPGA_READY_FILE}</td>
 *     <td>{@code /tmp/deviceplugin4j.ready}</td>
 *     <td>written once every resource is registered (for the readiness probe)</td></tr>
 * <tr><td>{@code --metrics-address}</td><td>{@code FPGA_METRICS_ADDRESS}, {@code METRICS_ADDRESS}</td>
 *     <td>none ({@code :9400} in the image)</td>
 *     <td>{@code [host]:port} of the HTTP endpoint: {@code /metrics}, {@code /healthz},
 *     {@code /readyz}; see {@link MetricsAddress}</td></tr>
 * <tr><td>{@code --config}</td><td>{@code FPGA_CONFIG}</td><td>none</td>
 *     <td>a properties file with the keys above (without {@code --})</td></tr>
 * </table>
 *
 * @param root the root directory ({@code /} on a node)
 * @param mode how ports are grouped into resources
 * @param domain the resource names' domain
 * @param pollInterval how often sysfs is read again
 * @param readyFile the readiness file
 * @param metricsAddress where the HTTP endpoint listens; empty for none
 */
public record FpgaConfig(
    Path root,
    Mode mode,
    String domain,
    Duration pollInterval,
    Path readyFile,
    Optional<InetSocketAddress> metricsAddress) {

  /** How ports are grouped into resources. */
  public enum Mode {
    /** One resource per accelerator function ({@code afu_id}): {@code <domain>/af-<afu id>}. */
    AF,
    /** One resource per region interface ({@code compat_id}): {@code <domain>/region-<id>}. */
    REGION
  }

  /**
   * Checks for nulls and a positive poll interval.
   *
   * @param root see {@link #root()}
   * @param mode see {@link #mode()}
   * @param domain see {@link #domain()}
   * @param pollInterval see {@link #pollInterval()}
   * @param readyFile see {@link #readyFile()}
   * @param metricsAddress see {@link #metricsAddress()}
   */
  public FpgaConfig {
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(domain, "domain");
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(readyFile, "readyFile");
    Objects.requireNonNull(metricsAddress, "metricsAddress");
    if (pollInterval.isNegative() || pollInterval.isZero()) {
      throw new IllegalArgumentException("pollInterval must be positive, was " + pollInterval);
    }
  }

  /**
   * Settings without an HTTP endpoint.
   *
   * @param root see {@link #root()}
   * @param mode see {@link #mode()}
   * @param domain see {@link #domain()}
   * @param pollInterval see {@link #pollInterval()}
   * @param readyFile see {@link #readyFile()}
   */
  public FpgaConfig(Path root, Mode mode, String domain, Duration pollInterval, Path readyFile) {
    this(root, mode, domain, pollInterval, readyFile, Optional.empty());
  }

  /**
   * The defaults, with another root (what tests and the demo use).
   *
   * @param root the root directory
   * @return the settings
   */
  public static FpgaConfig defaults(Path root) {
    return new FpgaConfig(
        root,
        Mode.AF,
        "fpga.example.com",
        Duration.ofSeconds(5),
        Path.of("/tmp/deviceplugin4j.ready"));
  }

  /**
   * Reads the settings from flags, environment variables and an optional file, as the plugin's
   * command line does ({@link FpgaPlugin}).
   *
   * @param args command-line flags, {@code --key=value} or {@code --key value}
   * @param env the environment, usually {@link System#getenv()}
   * @return the settings
   * @throws IllegalArgumentException naming the bad flag, key or value
   */
  public static FpgaConfig parse(String[] args, Map<String, String> env) {
    return PluginCli.parse(new FpgaPlugin(), FpgaPlugin.defaults(env), args).config();
  }

  /**
   * The resource name for a function or interface ID in this mode.
   *
   * @param functionId an AFU ID ({@link Mode#AF}) or a region interface ID ({@link Mode#REGION})
   * @return e.g. {@code fpga.example.com/af-d8424dc4a4a3c413f89e433683f9040b}
   */
  public String resourceName(String functionId) {
    return domain + "/" + (mode == Mode.AF ? "af-" : "region-") + functionId;
  }
}
