package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.DeclarativeBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;

/**
 * The SDK's minimal declarative plugin as a process: one {@link DeclarativeBackend} resource (no
 * {@code Allocator}: the core answers from the devices), legacy registration on the plugin
 * directory of {@code DEVICE_PLUGIN_DIR}; runs until SIGTERM.
 *
 * <pre>
 * DEVICE_PLUGIN_DIR=/tmp/dp java -cp benchmarks/target/deviceplugin4j-benchmarks.jar \
 *     io.github.deviceplugin4j.benchmarks.process.DeclarativeMain bench.example.com/declarative 4
 * </pre>
 */
public final class DeclarativeMain {

  private DeclarativeMain() {}

  /**
   * Runs the host.
   *
   * @param args the resource name and the number of devices
   */
  public static void main(String[] args) {
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: DeclarativeMain <resource> <devices>");
    }
    DevicePluginHost.builder()
        .registrationMode(RegistrationMode.LEGACY)
        .backend(new DeclarativeBackend(args[0], Integer.parseInt(args[1])))
        .run();
  }
}
