package io.github.deviceplugin4j.examples.common;

import java.net.InetSocketAddress;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The {@code --metrics-address} option every example plugin has, as a picocli mixin: where the HTTP
 * endpoint with {@code /metrics}, {@code /healthz} and {@code /readyz} listens ({@link
 * MetricsAddress}).
 *
 * <pre>{@code
 * @Mixin MetricsAddressOption metrics;
 * ...
 * PluginMetrics.enable(host, metrics.address());
 * }</pre>
 */
public final class MetricsAddressOption {
  @Option(
      names = "--" + MetricsAddress.KEY,
      paramLabel = "[HOST]:PORT",
      defaultValue = "",
      description = {
        "Where the HTTP endpoint (/metrics, /healthz, /readyz) listens, as HOST:PORT or :PORT;"
            + " empty for none. Default: none (the images set METRICS_ADDRESS=:9400)."
      })
  String value;

  /** Creates the option; picocli sets its value. */
  public MetricsAddressOption() {}

  /**
   * The address.
   *
   * @return where to listen; empty for no endpoint
   * @throws IllegalArgumentException naming the option when the value is no address
   */
  public Optional<InetSocketAddress> address() {
    return MetricsAddress.parse(value);
  }
}
