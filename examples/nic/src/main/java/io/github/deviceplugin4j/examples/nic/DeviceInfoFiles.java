package io.github.deviceplugin4j.examples.nic;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The device-info files of one resource, as the Network Plumbing WG's Device Information
 * Specification (1.1.0) defines them: {@code <dir>/<resource name, '/' as '-'>-<device
 * ID>-device.json} holding {@code
 * {"type":"pci","version":"1.1.0","pci":{"pci-address":..,"pf-pci-address":..}}}. Multus copies the
 * file of the allocated VF for SR-IOV CNI when the pod's network is attached.
 *
 * <p>The rule this plugin follows: a VF's file is written (replacing an older one) when the VF is
 * allocated; it is removed when the VF leaves the pool (it disappeared, or was rebound to a driver
 * the pool does not accept), and every file this process wrote is removed when the plugin stops, as
 * the specification asks. Files of VFs still present are left alone at start, since a pod allocated
 * by an earlier instance of the plugin may not have been attached yet.
 */
final class DeviceInfoFiles {
  static final String SPEC_VERSION = "1.1.0";
  private static final String SUFFIX = "-device.json";

  private final Path dir;
  private final String prefix;
  private final Set<Path> written = ConcurrentHashMap.newKeySet();

  DeviceInfoFiles(Path dir, String resourceName) {
    this.dir = Objects.requireNonNull(dir, "dir");
    this.prefix = resourceName.replace('/', '-') + "-";
  }

  Path fileFor(String deviceId) {
    return dir.resolve(prefix + deviceId + SUFFIX);
  }

  /** Writes (atomically replaces) the file of a VF. */
  void write(VirtualFunction vf) throws IOException {
    Files.createDirectories(dir);
    Path file = fileFor(vf.address());
    Path tmp = dir.resolve("." + file.getFileName() + ".tmp");
    Files.writeString(tmp, json(vf), StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    written.add(file);
  }

  /**
   * Removes the files of this resource whose device is not in {@code present}; returns their IDs.
   */
  List<String> removeAllExcept(Set<String> present) throws IOException {
    List<String> removed = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return removed;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, prefix + "*" + SUFFIX)) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        String id = name.substring(prefix.length(), name.length() - SUFFIX.length());
        if (!present.contains(id)) {
          Files.deleteIfExists(file);
          written.remove(file);
          removed.add(id);
        }
      }
    }
    return removed;
  }

  /** Removes every file this process wrote. */
  void removeWritten() throws IOException {
    for (Path file : List.copyOf(written)) {
      Files.deleteIfExists(file);
      written.remove(file);
    }
  }

  /**
   * The JSON document. Every value is a PCI address checked against {@code dddd:bb:dd.f} by the
   * scanner, so no value needs escaping; {@link #quote} still escapes defensively.
   */
  static String json(VirtualFunction vf) {
    return "{\"type\":\"pci\",\"version\":"
        + quote(SPEC_VERSION)
        + ",\"pci\":{\"pci-address\":"
        + quote(vf.address())
        + ",\"pf-pci-address\":"
        + quote(vf.pfAddress())
        + "}}\n";
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
