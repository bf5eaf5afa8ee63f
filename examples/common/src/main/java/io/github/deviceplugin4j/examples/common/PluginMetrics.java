package io.github.deviceplugin4j.examples.common;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.micrometer.DevicePluginMetrics;
import io.github.deviceplugin4j.micrometer.PrometheusMetricsSource;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * Turns on the example plugins' HTTP endpoint: {@code /metrics} (the SDK's Micrometer meters in
 * Prometheus format), {@code /healthz} and {@code /readyz} for the DaemonSet's probes.
 *
 * <pre>{@code
 * DevicePluginHost.Builder host = DevicePluginHost.builder();
 * PluginMetrics.enable(host, config.metricsAddress());
 * }</pre>
 */
public final class PluginMetrics {
  private PluginMetrics() {}

  /**
   * Records the host's meters in a Prometheus registry and serves it, with the probes, on an
   * address; does nothing without one.
   *
   * @param host the host's builder
   * @param address where the HTTP endpoint listens; empty for no endpoint and no metrics
   * @return the registry, or empty when the endpoint is off
   */
  public static Optional<PrometheusMeterRegistry> enable(
      DevicePluginHost.Builder host, Optional<InetSocketAddress> address) {
    if (address.isEmpty()) {
      return Optional.empty();
    }
    // tag::enable[]
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    DevicePluginMetrics.of(registry).bindTo(host);
    host.httpEndpoint(address.get()).metricsSource(PrometheusMetricsSource.of(registry));
    // end::enable[]
    return Optional.of(registry);
  }
}
