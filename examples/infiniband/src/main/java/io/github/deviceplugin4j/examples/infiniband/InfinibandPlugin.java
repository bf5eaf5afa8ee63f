package io.github.deviceplugin4j.examples.infiniband;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.MetricsAddressOption;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.common.PluginMetrics;
import io.github.deviceplugin4j.examples.common.ScanOptions;
import io.github.deviceplugin4j.examples.infiniband.InfinibandConfig.Mode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The InfiniBand/RDMA device plugin's entry point and command line: {@code java -jar
 * deviceplugin4j-example-infiniband.jar --root=/host}; settings in {@link InfinibandConfig}.
 */
@Command(
    name = "deviceplugin4j-example-infiniband",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    sortOptions = false,
    exitCodeList = PluginCli.HOST_FATAL,
    description = "Serves RDMA HCAs to the kubelet as one resource, whole or shared.")
public final class InfinibandPlugin implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin ScanOptions scan;

  @Option(
      names = "--mode",
      paramLabel = "exclusive|shared",
      defaultValue = "exclusive",
      description =
          "exclusive: a device per HCA; shared: --slots devices per HCA. Default: exclusive.")
  Mode mode;

  @Option(
      names = "--slots",
      paramLabel = "N",
      description = "Containers that may share one HCA (shared mode). Default: 8 when shared.")
  Integer slots;

  @Option(
      names = "--domain",
      paramLabel = "DOMAIN",
      defaultValue = "rdma.example.com",
      description = "Domain of the resource name. Default: ${DEFAULT-VALUE}.")
  String domain;

  @Option(
      names = "--resource",
      paramLabel = "NAME",
      description = "The resource name after the domain. Default: hca, or hca_shared when shared.")
  String resource;

  @Option(
      names = "--hcas",
      paramLabel = "NAME",
      split = ",",
      description = "The RDMA devices to serve, e.g. mlx5_0,mlx5_1. Default: all.")
  List<String> hcas = new ArrayList<>();

  @Option(
      names = "--ready-file",
      paramLabel = "FILE",
      defaultValue = "/tmp/deviceplugin4j.ready",
      description = "Exists while the resource is registered. Default: ${DEFAULT-VALUE}.")
  Path readyFile;

  @Mixin MetricsAddressOption metrics;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "A properties file with the settings above (mode=shared). Default: none.")
  Path config;

  /** Creates the command; picocli sets its options. */
  public InfinibandPlugin() {}

  /**
   * Where options not given on the command line come from.
   *
   * @param env the environment
   * @return {@code IB_<OPTION>} variables, then the {@code --config} file
   */
  public static EnvironmentDefaults defaults(Map<String, String> env) {
    return EnvironmentDefaults.of("IB_", env).withPropertiesFile("--config");
  }

  /**
   * Runs the plugin until SIGTERM; see {@code --help}.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(PluginCli.execute(new InfinibandPlugin(), defaults(System.getenv()), args));
  }

  /**
   * The settings the options give.
   *
   * @return the settings
   * @throws IllegalArgumentException naming a bad value
   */
  InfinibandConfig config() {
    boolean shared = mode == Mode.SHARED;
    return new InfinibandConfig(
        scan.root(),
        mode,
        slots != null ? slots : shared ? 8 : 1,
        domain,
        resource != null && !resource.isBlank() ? resource : shared ? "hca_shared" : "hca",
        hcas.stream().map(String::trim).filter(h -> !h.isEmpty()).toList(),
        scan.pollInterval(),
        readyFile,
        metrics.address());
  }

  /**
   * Serves the HCAs as one resource and runs until SIGTERM.
   *
   * @return 0 after a stop signal
   */
  @Override
  public Integer call() {
    InfinibandConfig config = PluginCli.settings(spec, this::config);
    InfinibandBackend backend = new InfinibandBackend(config);
    DevicePluginHost.Builder host =
        DevicePluginHost.builder()
            .backend(backend, backend.sharing())
            .listener(new ReadinessFile(config.readyFile(), List.of(config.resourceName())));
    PluginMetrics.enable(host, config.metricsAddress());
    host.run();
    return PluginCli.OK;
  }
}
