package io.github.deviceplugin4j.dra;

import java.nio.file.Path;

/** A driver process for {@link DraStopSignalTest}: serves until SIGTERM. */
public final class DriverMain {
  private DriverMain() {}

  /**
   * Runs the host.
   *
   * @param args plugin directory, registry directory, pod UID
   */
  public static void main(String[] args) {
    DraPluginHost.builder("gpu.example.com", new RecordingDriver())
        .pluginDir(Path.of(args[0]))
        .registryDir(Path.of(args[1]))
        .rollingUpdate(args[2])
        .run();
  }
}
