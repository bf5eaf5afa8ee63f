package io.github.deviceplugin4j.examples.nicdra;

import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.nic.NicConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * The NIC DRA driver's command line ({@link NicDraDriver#main}): the NIC example's own options
 * (passed to its parser, which names a bad one), plus the driver's settings from the environment.
 */
@Command(
    name = "deviceplugin4j-example-nic-dra",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    description = {
      "Serves the NIC example's SR-IOV virtual functions as a DRA driver, and writes each prepared"
          + " VF's interface name and MAC address on its claim.",
      "Takes the NIC example's options (--root, --config, --pool.<name>.<setting>=VALUE, ...: see"
          + " deviceplugin4j-example-nic --help). From the environment: NODE_NAME (required),"
          + " NIC_DRA_DRIVER_NAME (default nic.example.com), NIC_DRA_CDI_DIR (default"
          + " /var/run/cdi), NIC_DRA_PLUGIN_DIR (default /var/lib/kubelet/plugins/<driver>)."
    })
public final class NicDraCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Unmatched List<String> nicOptions = new ArrayList<>();

  private final Map<String, String> env;

  /**
   * Creates the command on an environment.
   *
   * @param env where the driver's settings and the NIC example's defaults come from
   */
  public NicDraCommand(Map<String, String> env) {
    this.env = Map.copyOf(env);
  }

  /**
   * Runs the driver until SIGTERM.
   *
   * @return 0 after a stop signal
   */
  @Override
  public Integer call() {
    NicConfig config =
        PluginCli.settings(spec, () -> NicConfig.parse(nicOptions.toArray(String[]::new), env));
    String driver = env.getOrDefault("NIC_DRA_DRIVER_NAME", NicDraDriver.DEFAULT_DRIVER_NAME);
    String node = env.getOrDefault(BackendDriver.NODE_NAME_ENV, "");
    NicDraDriver.builder(
            config, driver, node, Path.of(env.getOrDefault("NIC_DRA_CDI_DIR", "/var/run/cdi")))
        .host()
        .pluginDir(
            Path.of(env.getOrDefault("NIC_DRA_PLUGIN_DIR", "/var/lib/kubelet/plugins/" + driver)))
        .run();
    return PluginCli.OK;
  }
}
