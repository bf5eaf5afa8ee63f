package io.github.deviceplugin4j.examples.fpga;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.examples.common.PluginMetrics;
import java.util.List;

/** The FPGA device plugin's entry point: {@code java -jar deviceplugin4j-example-fpga.jar}. */
public final class FpgaPlugin {
  private FpgaPlugin() {}

  /**
   * Discovers the FPGA ports, serves one resource per accelerator (or region), and runs until
   * SIGTERM.
   *
   * @param args settings as {@code --key=value}; see {@link FpgaConfig}
   */
  public static void main(String[] args) {
    FpgaConfig config = FpgaConfig.parse(args, System.getenv());
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
  }
}
