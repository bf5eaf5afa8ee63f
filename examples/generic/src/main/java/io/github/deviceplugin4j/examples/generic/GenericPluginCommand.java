package io.github.deviceplugin4j.examples.generic;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.MetricsAddressOption;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.common.ScanOptions;
import io.github.deviceplugin4j.examples.generic.GenericConfig.ConfigException;
import io.github.deviceplugin4j.micrometer.DevicePluginMetrics;
import io.github.deviceplugin4j.micrometer.PrometheusMetricsSource;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The generic plugin's command line ({@link GenericPlugin#main}): the configuration file, the root,
 * the poll interval and the HTTP endpoint; {@code --help} lists them.
 */
@Command(
    name = "deviceplugin4j-example-generic",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    sortOptions = false,
    description = {
      "Serves the devices a YAML or JSON file describes, one resource per entry, and follows the"
          + " file: a good change is applied, a bad one is refused and logged."
    })
public final class GenericPluginCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      defaultValue = "/etc/deviceplugin4j-generic/config.yaml",
      description = "The YAML or JSON file of resources. Default: ${DEFAULT-VALUE}.")
  Path config;

  @Mixin ScanOptions scan;

  @Mixin MetricsAddressOption metrics;

  /** Refused with a pointer to the DRA jar, which takes it. */
  @Option(names = "--dra", hidden = true)
  boolean dra;

  /** Creates the command; picocli sets its options. */
  public GenericPluginCommand() {}

  /**
   * Where options not given on the command line come from.
   *
   * @param env the environment
   * @return {@code GENERIC_<OPTION>} variables ({@code METRICS_ADDRESS} for the endpoint)
   */
  public static EnvironmentDefaults defaults(Map<String, String> env) {
    return EnvironmentDefaults.of("GENERIC_", env);
  }

  /** The plugin and its HTTP endpoint, stopped together. */
  public record Running(GenericPlugin plugin, Optional<ProbeEndpoint> http)
      implements AutoCloseable {
    @Override
    public void close() {
      http.ifPresent(ProbeEndpoint::close);
      plugin.close();
    }
  }

  /**
   * Starts the plugin as the options say, with its HTTP endpoint when {@code --metrics-address}
   * gives one: every host's meters in one Prometheus registry.
   *
   * @param hostSettings applied to each resource's host builder (tests set the plugin directory)
   * @return the running plugin
   * @throws ConfigException when the first configuration is unusable
   * @throws IOException when the file cannot be read or the HTTP address bound
   */
  public Running start(Consumer<DevicePluginHost.Builder> hostSettings)
      throws ConfigException, IOException {
    Optional<InetSocketAddress> address = PluginCli.settings(spec, metrics::address);
    if (dra) {
      throw new ParameterException(
          spec.commandLine(),
          "--dra: this jar serves device plugins only; the DRA driver ships in"
              + " deviceplugin4j-example-generic-dra.jar (image deviceplugin4j-example-generic-dra),"
              + " which takes --dra and the same config file");
    }
    if (address.isEmpty()) {
      return new Running(
          GenericPlugin.start(config, scan.root(), scan.pollInterval(), hostSettings),
          Optional.empty());
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    DevicePluginMetrics meters = DevicePluginMetrics.of(registry);
    GenericPlugin plugin =
        GenericPlugin.start(
            config,
            scan.root(),
            scan.pollInterval(),
            b -> {
              hostSettings.accept(b);
              meters.bindTo(b);
            });
    try {
      ProbeEndpoint http =
          ProbeEndpoint.start(
              address.get(),
              () -> plugin.liveness(DevicePluginHost.DEFAULT_LIVENESS_BOUND),
              plugin::readiness,
              PrometheusMetricsSource.of(registry));
      return new Running(plugin, Optional.of(http));
    } catch (IOException | RuntimeException e) {
      plugin.close();
      throw e;
    }
  }

  /**
   * Serves the file until SIGTERM.
   *
   * @return 0 after a stop signal
   * @throws Exception when the first configuration is unusable or the endpoint cannot start
   */
  @Override
  public Integer call() throws Exception {
    GenericPlugin.awaitStopSignal(start(b -> {}));
    return PluginCli.OK;
  }
}
