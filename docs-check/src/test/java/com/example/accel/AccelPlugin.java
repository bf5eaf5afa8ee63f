package com.example.accel;

import io.github.deviceplugin4j.core.DevicePluginHost;
import java.nio.file.Path;

/** The plugin's entry point: {@code AccelPlugin [root]}, root defaulting to {@code /}. */
public final class AccelPlugin {

  private AccelPlugin() {}

  /**
   * Serves example.com/accel until SIGTERM.
   *
   * @param args optionally the root directory to read {@code dev/} and {@code sys/} from
   */
  public static void main(String[] args) {
    Path root = Path.of(args.length > 0 ? args[0] : "/");
    DevicePluginHost.builder().backend(new AccelBackend(root)).run();
  }
}
