package io.github.deviceplugin4j.examples.nic;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.examples.common.PluginMetrics;
import java.util.List;

/** The SR-IOV NIC device plugin's entry point: {@code java -jar deviceplugin4j-example-nic.jar}. */
public final class NicPlugin {
  private NicPlugin() {}

  /**
   * Serves one resource per configured pool and runs until SIGTERM.
   *
   * @param args settings as {@code --key=value}; see {@link NicConfig}
   */
  public static void main(String[] args) {
    NicConfig config = NicConfig.parse(args, System.getenv());
    List<NicBackend> backends =
        config.pools().stream().map(p -> new NicBackend(config, p)).toList();
    List<String> names = backends.stream().map(NicBackend::resourceName).toList();
    DevicePluginHost.Builder host =
        DevicePluginHost.builder().listener(new ReadinessFile(config.readyFile(), names));
    backends.forEach(host::backend);
    PluginMetrics.enable(host, config.metricsAddress());
    host.run();
  }
}
