package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;

/**
 * A plugin process hosting many resources in one {@link DevicePluginHost}: {@code
 * bench.example.com/r0} ... each a {@link BenchBackend} with the same number of devices, legacy
 * registration on the plugin directory of {@code DEVICE_PLUGIN_DIR}; runs until SIGTERM.
 *
 * <pre>
 * DEVICE_PLUGIN_DIR=/tmp/dp java -cp benchmarks/target/deviceplugin4j-benchmarks.jar \
 *     io.github.deviceplugin4j.benchmarks.process.MultiResourceMain 100 8
 * </pre>
 */
public final class MultiResourceMain {

  /** Resource name prefix; the index follows. */
  public static final String PREFIX = "bench.example.com/r";

  private MultiResourceMain() {}

  /**
   * Runs the host.
   *
   * @param args the number of resources, and optionally devices per resource (default 8)
   */
  public static void main(String[] args) {
    if (args.length < 1 || args.length > 2) {
      throw new IllegalArgumentException(
          "usage: MultiResourceMain <resources> [<devices per resource, default 8>]");
    }
    int resources = Integer.parseInt(args[0]);
    int devices = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    DevicePluginHost.Builder host =
        DevicePluginHost.builder().registrationMode(RegistrationMode.LEGACY);
    for (int i = 0; i < resources; i++) {
      host.backend(new BenchBackend(PREFIX + i, devices));
    }
    host.run();
  }
}
