package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.DeclarativeBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.micrometer.DevicePluginMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The SDK's minimal declarative plugin as a process: one {@link DeclarativeBackend} resource (no
 * {@code Allocator}: the core answers from the devices), legacy registration on the plugin
 * directory of {@code DEVICE_PLUGIN_DIR}; runs until SIGTERM. With {@code --metrics} it also
 * records {@code DevicePluginMetrics} in a Prometheus registry, as the example plugins do.
 *
 * <pre>
 * DEVICE_PLUGIN_DIR=/tmp/dp java -cp benchmarks/target/deviceplugin4j-benchmarks.jar \
 *     io.github.deviceplugin4j.benchmarks.process.DeclarativeMain bench.example.com/declarative 4
 * </pre>
 */
public final class DeclarativeMain {

  private DeclarativeMain() {}

  /**
   * Runs the host.
   *
   * @param args the resource name, the number of devices, and optionally {@code --metrics}
   */
  public static void main(String[] args) {
    boolean metrics = args.length == 3 && args[2].equals("--metrics");
    if (args.length != 2 && !metrics) {
      throw new IllegalArgumentException("usage: DeclarativeMain <resource> <devices> [--metrics]");
    }
    DevicePluginHost.Builder host =
        DevicePluginHost.builder()
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new DeclarativeBackend(args[0], Integer.parseInt(args[1])));
    if (metrics) {
      DevicePluginMetrics.of(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).bindTo(host);
    }
    host.run();
  }
}
