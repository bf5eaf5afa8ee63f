package com.example.accel;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import java.nio.file.Path;
import java.util.List;

/** The plugin's entry point: {@code AccelPlugin [root]}, root defaulting to {@code /}. */
public final class AccelPlugin {

  /** Exists while example.com/accel is registered with the kubelet: for a readiness probe. */
  public static final Path READY_FILE = Path.of("/tmp/accel.ready");

  private AccelPlugin() {}

  /**
   * Serves example.com/accel until SIGTERM.
   *
   * @param args optionally the root directory to read {@code dev/} and {@code sys/} from
   */
  public static void main(String[] args) {
    Path root = Path.of(args.length > 0 ? args[0] : "/");
    plugin(root, READY_FILE).run();
  }

  /**
   * The plugin, ready to start or run.
   *
   * @param root where {@code dev/} and {@code sys/} are
   * @param readyFile the file that exists while the resource is registered
   * @return the host's builder
   */
  public static DevicePluginHost.Builder plugin(Path root, Path readyFile) {
    AccelBackend backend = new AccelBackend(root);
    return DevicePluginHost.builder()
        .backend(backend)
        .listener(new ReadinessFile(readyFile, List.of(backend.resourceName())));
  }
}
