package com.example.accel;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * Advertises every accelerator of a node, {@code /dev/accelN}, as a device of example.com/accel.
 */
public class AccelBackend implements DeviceBackend {

  private final Path root;

  /**
   * A backend reading a node's files.
   *
   * @param root where {@code dev/} and {@code sys/} are: {@code /} on a node, a temp dir in tests
   */
  public AccelBackend(Path root) {
    this.root = root;
  }

  @Override
  public String resourceName() {
    return "example.com/accel";
  }

  @Override
  public List<Device> devices() throws IOException {
    try (Stream<Path> files = Files.list(root.resolve("dev"))) {
      return files
          .map(file -> file.getFileName().toString())
          .filter(name -> name.matches("accel\\d+"))
          .sorted()
          .map(this::toDevice)
          .toList();
    }
  }

  @Override
  public Duration pollInterval() {
    return Duration.ofSeconds(1);
  }

  // tag::to-device[]
  private Device toDevice(String name) {
    Path sys = root.resolve("sys/class/accel").resolve(name);
    String status = read(sys.resolve("status"));
    String numa = read(sys.resolve("numa_node"));
    Device.Builder device =
        Device.builder(name)
            .health(Health.of(status.isEmpty() || status.equals("ok")))
            .deviceNode(DeviceNode.rw("/dev/" + name))
            .env("ACCEL_VISIBLE_DEVICES", name);
    if (numa.matches("\\d+")) {
      device.numaNode(Integer.parseInt(numa));
    }
    return device.build();
  }

  // end::to-device[]

  private static String read(Path file) {
    try {
      return Files.readString(file).strip();
    } catch (IOException missing) {
      return "";
    }
  }
}
