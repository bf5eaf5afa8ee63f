package io.github.deviceplugin4j.examples.fpga;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.MetricsAddressOption;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.common.PluginMetrics;
import io.github.deviceplugin4j.examples.common.ScanOptions;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The FPGA device plugin's entry point and command line: {@code java -jar
 * deviceplugin4j-example-fpga.jar --root=/host}; settings in {@link FpgaConfig}.
 */
@Command(
    name = "deviceplugin4j-example-fpga",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    sortOptions = false,
    exitCodeList = PluginCli.HOST_FATAL,
    description = "Serves the FPGA ports of DFL cards to the kubelet, one resource per function.")
public final class FpgaPlugin implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin ScanOptions scan;

  @Option(
      names = "--mode",
      paramLabel = "af|region",
      defaultValue = "af",
      description = "af: a resource per accelerator function; region: per region. Default: af.")
  FpgaConfig.Mode mode;

  @Option(
      names = "--domain",
      paramLabel = "DOMAIN",
      defaultValue = "fpga.example.com",
      description = "Domain of the resource names. Default: ${DEFAULT-VALUE}.")
  String domain;

  @Option(
      names = "--ready-file",
      paramLabel = "FILE",
      defaultValue = "/tmp/deviceplugin4j.ready",
      description = "Exists while every resource is registered. Default: ${DEFAULT-VALUE}.")
  Path readyFile;

  @Mixin MetricsAddressOption metrics;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "A properties file with the settings above (root=/host). Default: none.")
  Path config;

  /** Creates the command; picocli sets its options. */
  public FpgaPlugin() {}

  /**
   * Where options not given on the command line come from.
   *
   * @param env the environment
   * @return {@code FPGA_<OPTION>} variables, then the {@code --config} file
   */
  public static EnvironmentDefaults defaults(Map<String, String> env) {
    return EnvironmentDefaults.of("FPGA_", env).withPropertiesFile("--config");
  }

  /**
   * Runs the plugin until SIGTERM; see {@code --help}.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(PluginCli.execute(new FpgaPlugin(), defaults(System.getenv()), args));
  }

  /**
   * The settings the options give.
   *
   * @return the settings
   * @throws IllegalArgumentException naming a bad value
   */
  FpgaConfig config() {
    return new FpgaConfig(
        scan.root(), mode, domain, scan.pollInterval(), readyFile, metrics.address());
  }

  /**
   * Discovers the FPGA ports, serves one resource per accelerator (or region), and runs until
   * SIGTERM.
   *
   * @return 0 after a stop signal
   */
  @Override
  public Integer call() {
    FpgaConfig config = PluginCli.settings(spec, this::config);
    List<FpgaBackend> backends = FpgaBackend.discover(config);
    if (backends.isEmpty()) {
      throw new IllegalStateException(
          "no FPGA port under " + config.root() + "/sys/class/fpga_region; nothing to advertise");
    }
    List<String> names = backends.stream().map(FpgaBackend::resourceName).toList();
    DevicePluginHost.Builder host =
        DevicePluginHost.builder().listener(new ReadinessFile(config.readyFile(), names));
    backends.forEach(host::backend);
    PluginMetrics.enable(host, config.metricsAddress());
    host.run();
    return PluginCli.OK;
  }
}
