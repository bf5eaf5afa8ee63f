package io.github.deviceplugin4j.micrometer;

import io.github.deviceplugin4j.core.MetricsSource;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;

/**
 * Serves a Micrometer {@link PrometheusMeterRegistry} as the host's {@code /metrics}: OpenMetrics
 * when the scraper's {@code Accept} header asks for {@code application/openmetrics-text}
 * (Prometheus itself does), the Prometheus text format 0.0.4 otherwise (curl, older scrapers).
 *
 * <p>Needs {@code io.micrometer:micrometer-registry-prometheus} on the class path (an optional
 * dependency of this module). Its protobuf exposition format is never chosen, so {@code
 * io.prometheus:prometheus-metrics-exposition-formats} may be excluded to keep a plugin's jar
 * small.
 *
 * <pre>{@code
 * PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * DevicePluginMetrics metrics = DevicePluginMetrics.of(registry);
 * DevicePluginHost.builder()
 *     .backend(backend)
 *     .observer(metrics)
 *     .listener(metrics)
 *     .httpEndpoint(new InetSocketAddress(9400))
 *     .metricsSource(PrometheusMetricsSource.of(registry))
 *     .start();
 * }</pre>
 */
public final class PrometheusMetricsSource implements MetricsSource {

  /** Content type of the Prometheus text format, version 0.0.4. */
  public static final String TEXT = PrometheusTextFormatWriter.CONTENT_TYPE;

  /** Content type of the OpenMetrics text format, version 1.0.0. */
  public static final String OPENMETRICS = OpenMetricsTextFormatWriter.CONTENT_TYPE;

  private final PrometheusMeterRegistry registry;

  private PrometheusMetricsSource(PrometheusMeterRegistry registry) {
    this.registry = registry;
  }

  /**
   * A source serving the given registry.
   *
   * @param registry the registry to scrape
   * @return the source
   */
  public static PrometheusMetricsSource of(PrometheusMeterRegistry registry) {
    return new PrometheusMetricsSource(Objects.requireNonNull(registry, "registry"));
  }

  /**
   * The format answered for an {@code Accept} header.
   *
   * @param accept the header, or an empty string
   * @return {@link #OPENMETRICS} or {@link #TEXT}
   */
  public static String contentType(String accept) {
    return accept != null && accept.contains("application/openmetrics-text") ? OPENMETRICS : TEXT;
  }

  @Override
  public String scrape(String accept, OutputStream out) throws IOException {
    String type = contentType(accept);
    registry.scrape(out, type);
    return type;
  }
}
