package io.github.deviceplugin4j.examples.infiniband;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.examples.common.PluginMetrics;
import java.util.List;

/**
 * The InfiniBand/RDMA device plugin's entry point: {@code java -jar
 * deviceplugin4j-example-infiniband.jar}.
 */
public final class InfinibandPlugin {
  private InfinibandPlugin() {}

  /**
   * Serves the HCAs as one resource and runs until SIGTERM.
   *
   * @param args settings as {@code --key=value}; see {@link InfinibandConfig}
   */
  public static void main(String[] args) {
    InfinibandConfig config = InfinibandConfig.parse(args, System.getenv());
    InfinibandBackend backend = new InfinibandBackend(config);
    DevicePluginHost.Builder host =
        DevicePluginHost.builder()
            .backend(backend, backend.sharing())
            .listener(new ReadinessFile(config.readyFile(), List.of(config.resourceName())));
    PluginMetrics.enable(host, config.metricsAddress());
    host.run();
  }
}
