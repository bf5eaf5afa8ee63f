package io.github.deviceplugin4j.docs.backend;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds the fake node the backends of these docs read: {@code dev/accelN} and {@code sys/}. */
final class Nodes {
  private Nodes() {}

  static void accelerator(Path root, String name, int numaNode, String status) throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Path dev = root.resolve("dev").resolve(name);
    if (!Files.exists(dev)) {
      Files.createFile(dev);
    }
    Path sys = Files.createDirectories(root.resolve("sys/class/accel").resolve(name));
    Files.writeString(sys.resolve("numa_node"), Integer.toString(numaNode));
    Files.writeString(sys.resolve("status"), status);
  }
}
