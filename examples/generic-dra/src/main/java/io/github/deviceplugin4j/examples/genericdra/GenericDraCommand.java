package io.github.deviceplugin4j.examples.genericdra;

import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.examples.common.DraOptions;
import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.common.ScanOptions;
import io.github.deviceplugin4j.examples.generic.GenericPlugin;
import io.github.deviceplugin4j.examples.genericdra.GenericDraDriver.Options;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The command line of the generic DRA driver ({@code --dra}); without {@code --dra} the jar runs
 * the device plugin ({@link GenericPlugin}) and its command line.
 */
@Command(
    name = "deviceplugin4j-example-generic-dra",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    sortOptions = false,
    description = {
      "With --dra: serves the devices a YAML or JSON file describes as a DRA driver, and follows"
          + " the file. Without --dra: the generic device plugin (--help without --dra lists its"
          + " options)."
    })
public final class GenericDraCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--dra",
      required = true,
      description = "Serve as a DRA driver (this command's options need it).")
  boolean dra;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      defaultValue = "/etc/deviceplugin4j-generic/config.yaml",
      description = "The YAML or JSON file of resources. Default: ${DEFAULT-VALUE}.")
  Path config;

  @Mixin ScanOptions scan;

  @Option(
      names = "--driver-name",
      paramLabel = "NAME",
      defaultValue = GenericDraDriver.DEFAULT_DRIVER_NAME,
      description = "The DRA driver's name. Default: ${DEFAULT-VALUE}.")
  String driverName;

  @Mixin DraOptions draOptions;

  /** Creates the command; picocli sets its options. */
  public GenericDraCommand() {}

  /**
   * Where options not given on the command line come from.
   *
   * @param env the environment
   * @return {@code GENERIC_<OPTION>} variables, then {@code NODE_NAME} and {@code POD_UID}
   */
  public static EnvironmentDefaults defaults(Map<String, String> env) {
    return DraOptions.fallbacks(EnvironmentDefaults.of("GENERIC_", env));
  }

  /**
   * The driver's settings the options give.
   *
   * @return the settings
   * @throws IllegalArgumentException when the node name is missing
   */
  Options options() {
    if (draOptions.nodeName().isBlank()) {
      throw new IllegalArgumentException(
          "the node name is missing: set NODE_NAME from the downward API (fieldRef"
              + " spec.nodeName) or --node-name");
    }
    return new Options(
        config,
        scan.root(),
        scan.pollInterval(),
        driverName,
        draOptions.nodeName(),
        draOptions.pluginDir(driverName),
        draOptions.registryDir(),
        draOptions.cdiDir(),
        draOptions.podUid());
  }

  /**
   * Serves the configuration as a DRA driver until SIGTERM.
   *
   * @return 0 after a stop signal
   * @throws Exception when the first configuration is unusable or the driver cannot start
   */
  @Override
  public Integer call() throws Exception {
    Options options = PluginCli.settings(spec, this::options);
    GenericDraDriver generic = GenericDraDriver.start(options, b -> {});
    DraPluginHost.Builder host =
        DraPluginHost.builder(options.driverName(), generic.driver())
            .pluginDir(options.pluginDir())
            .registryDir(options.registryDir());
    options.podUid().ifPresent(host::rollingUpdate);
    DraPluginHost running = host.start();
    GenericPlugin.awaitStopSignal(
        () -> {
          running.close();
          generic.close();
        });
    return PluginCli.OK;
  }
}
