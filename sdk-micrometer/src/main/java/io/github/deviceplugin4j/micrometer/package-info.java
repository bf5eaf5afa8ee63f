/**
 * Micrometer metrics for a device plugin built on deviceplugin4j.
 *
 * <p>{@link io.github.deviceplugin4j.micrometer.DevicePluginMetrics} records the host's observer
 * and listener events as meters in any Micrometer {@code MeterRegistry}; {@link
 * io.github.deviceplugin4j.micrometer.PrometheusMetricsSource} serves a Prometheus registry on the
 * host's HTTP endpoint at {@code /metrics}.
 *
 * <pre>{@code
 * PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * DevicePluginMetrics metrics = DevicePluginMetrics.of(registry);
 * DevicePluginHost.builder()
 *     .backend(backend)
 *     .observer(metrics)
 *     .listener(metrics)
 *     .start();
 * }</pre>
 */
package io.github.deviceplugin4j.micrometer;
