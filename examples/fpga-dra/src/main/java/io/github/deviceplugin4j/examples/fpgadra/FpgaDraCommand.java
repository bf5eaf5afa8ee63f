package io.github.deviceplugin4j.examples.fpgadra;

import io.github.deviceplugin4j.examples.common.DraOptions;
import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.common.ScanOptions;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The FPGA DRA driver's command line ({@link FpgaDraDriver#main}); settings in {@link
 * FpgaDraConfig}.
 */
@Command(
    name = "deviceplugin4j-example-fpga-dra",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    sortOptions = false,
    description = "Serves the FPGA ports of DFL cards as a DRA driver, a device per port.")
public final class FpgaDraCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin ScanOptions scan;

  @Option(
      names = "--driver-name",
      paramLabel = "NAME",
      defaultValue = FpgaDraConfig.DEFAULT_DRIVER_NAME,
      description = "The DRA driver's name. Default: ${DEFAULT-VALUE}.")
  String driverName;

  @Mixin DraOptions dra;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "A properties file with the settings above (root=/host). Default: none.")
  Path config;

  /** Creates the command; picocli sets its options. */
  public FpgaDraCommand() {}

  /**
   * Where options not given on the command line come from.
   *
   * @param env the environment
   * @return {@code FPGA_<OPTION>} variables, then the {@code --config} file, then {@code NODE_NAME}
   */
  public static EnvironmentDefaults defaults(Map<String, String> env) {
    return DraOptions.fallbacks(
        EnvironmentDefaults.of("FPGA_", env).withPropertiesFile("--config"));
  }

  /**
   * The settings the options give.
   *
   * @return the settings
   * @throws IllegalArgumentException naming a bad or missing value
   */
  FpgaDraConfig config() {
    return new FpgaDraConfig(
        scan.root(),
        driverName,
        dra.nodeName(),
        scan.pollInterval(),
        dra.pluginDir(driverName),
        dra.registryDir(),
        dra.cdiDir(),
        dra.podUid());
  }

  /**
   * Runs the driver until SIGTERM.
   *
   * @return 0 after a stop signal
   */
  @Override
  public Integer call() {
    FpgaDraDriver.run(PluginCli.settings(spec, this::config));
    return PluginCli.OK;
  }
}
