package io.github.deviceplugin4j.examples.nic;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.MetricsAddressOption;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.common.PluginMetrics;
import io.github.deviceplugin4j.examples.common.ScanOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * The SR-IOV NIC device plugin's entry point and command line: {@code java -jar
 * deviceplugin4j-example-nic.jar --config=/etc/deviceplugin4j/nic.properties}; settings in {@link
 * NicConfig}.
 */
@Command(
    name = "deviceplugin4j-example-nic",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    sortOptions = false,
    exitCodeList = PluginCli.HOST_FATAL,
    description = {
      "Serves SR-IOV virtual functions to the kubelet, one resource per pool.",
      "A pool is pool.<name>.pf-names=ens1f0,ens1f1 (and .vendors, .devices, .drivers) in the"
          + " --config file, or --pool.<name>.<setting>=VALUE on the command line."
    })
public final class NicPlugin implements Callable<Integer> {
  private static final String POOL = "pool.";

  @Spec CommandSpec spec;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      defaultValue = "/etc/deviceplugin4j/nic.properties",
      description = "Properties file: the pools and any option below. Default: ${DEFAULT-VALUE}.")
  Path config;

  @Mixin ScanOptions scan;

  @Option(
      names = "--domain",
      paramLabel = "DOMAIN",
      defaultValue = "nic.example.com",
      description = "Domain of the resource names. Default: ${DEFAULT-VALUE}.")
  String domain;

  @Option(
      names = "--devinfo-dir",
      paramLabel = "DIR",
      defaultValue = "/var/run/k8s.cni.cncf.io/devinfo/dp",
      description = "Where device-info files for SR-IOV CNI go. Default: ${DEFAULT-VALUE}.")
  Path devInfoDir;

  @Option(
      names = "--ready-file",
      paramLabel = "FILE",
      defaultValue = "/tmp/deviceplugin4j.ready",
      description = "Exists while every pool is registered. Default: ${DEFAULT-VALUE}.")
  Path readyFile;

  @Mixin MetricsAddressOption metrics;

  /** {@code --pool.<name>.<setting>=value} flags, checked in {@link #poolFlags()}. */
  @Unmatched List<String> unmatched = new ArrayList<>();

  /** Creates the command; picocli sets its options. */
  public NicPlugin() {}

  /**
   * Where options not given on the command line come from.
   *
   * @param env the environment
   * @return {@code NIC_<OPTION>} variables, then the {@code --config} file with its pools
   */
  public static EnvironmentDefaults defaults(Map<String, String> env) {
    return EnvironmentDefaults.of("NIC_", env).withPropertiesFile("--config").withExtraKeys(POOL);
  }

  /**
   * Runs the plugin until SIGTERM; see {@code --help}.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(PluginCli.execute(new NicPlugin(), defaults(System.getenv()), args));
  }

  /**
   * The settings the options and the file's pools give.
   *
   * @return the settings
   * @throws IllegalArgumentException naming a bad value or pool key
   */
  NicConfig config() {
    EnvironmentDefaults defaults = (EnvironmentDefaults) spec.defaultValueProvider();
    Map<String, String> pools = new LinkedHashMap<>(defaults.extra(spec));
    pools.putAll(poolFlags());
    return new NicConfig(
        scan.root(),
        domain,
        NicConfig.pools(pools),
        devInfoDir,
        scan.pollInterval(),
        readyFile,
        metrics.address());
  }

  /** The {@code --pool.<name>.<setting>} flags, as {@code =value} or followed by the value. */
  private Map<String, String> poolFlags() {
    Map<String, String> flags = new LinkedHashMap<>();
    for (int i = 0; i < unmatched.size(); i++) {
      String arg = unmatched.get(i);
      if (!arg.startsWith("--" + POOL)) {
        throw new IllegalArgumentException(
            "Unknown option: '" + arg + "'; pools are set with --pool.<name>.<setting>=value");
      }
      int eq = arg.indexOf('=');
      if (eq > 0) {
        flags.put(arg.substring(2, eq), arg.substring(eq + 1));
      } else if (i + 1 < unmatched.size()) {
        flags.put(arg.substring(2), unmatched.get(++i));
      } else {
        throw new IllegalArgumentException(arg + " needs a value, e.g. " + arg + "=ens1f0");
      }
    }
    return flags;
  }

  /**
   * Serves one resource per configured pool and runs until SIGTERM.
   *
   * @return 0 after a stop signal
   */
  @Override
  public Integer call() {
    NicConfig config = PluginCli.settings(spec, this::config);
    List<NicBackend> backends =
        config.pools().stream().map(p -> new NicBackend(config, p)).toList();
    List<String> names = backends.stream().map(NicBackend::resourceName).toList();
    DevicePluginHost.Builder host =
        DevicePluginHost.builder().listener(new ReadinessFile(config.readyFile(), names));
    backends.forEach(host::backend);
    PluginMetrics.enable(host, config.metricsAddress());
    host.run();
    return PluginCli.OK;
  }
}
