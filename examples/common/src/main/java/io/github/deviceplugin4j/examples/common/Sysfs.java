package io.github.deviceplugin4j.examples.common;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Small, forgiving sysfs readers: a missing or unreadable file is an empty result, never a throw.
 *
 * <pre>{@code
 * Optional<Path> pci = Sysfs.real(root.resolve("sys/class/net/ens1f0/device"));
 * OptionalInt numa = pci.map(p -> Sysfs.numaNode(p, problems)).orElse(OptionalInt.empty());
 * }</pre>
 */
public final class Sysfs {
  /**
   * A PCI address as sysfs names devices: domain, bus, device and function, {@code 0000:3b:02.0}.
   */
  public static final Pattern PCI_ADDRESS =
      Pattern.compile("[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");

  private Sysfs() {}

  /**
   * The file's content without surrounding white space.
   *
   * @param file a sysfs attribute
   * @return its content, or empty when it cannot be read
   */
  public static Optional<String> read(Path file) {
    try {
      return Optional.of(Files.readString(file, StandardCharsets.UTF_8).trim());
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * Entries of a directory whose names match.
   *
   * @param dir a directory
   * @param name the pattern the whole entry name must match
   * @return the entries sorted by name; empty when the directory cannot be listed
   */
  public static List<Path> list(Path dir, Pattern name) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> name.matcher(p.getFileName().toString()).matches()).sorted().toList();
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }

  /**
   * Where a path leads after following every symlink.
   *
   * @param path a path, often a sysfs link such as {@code device}
   * @return the real path, or empty when it does not resolve
   */
  public static Optional<Path> real(Path path) {
    try {
      return Optional.of(path.toRealPath());
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * The PCI device directory a sysfs path belongs to: the nearest directory, walking up from where
   * the path resolves, whose name is a PCI address.
   *
   * @param path a path inside a PCI device's sysfs directory (or a link into one)
   * @return the PCI device directory, or empty when there is none
   */
  public static Optional<Path> pciDeviceOf(Path path) {
    for (Path p = real(path).orElse(null); p != null; p = p.getParent()) {
      Path name = p.getFileName();
      if (name != null && PCI_ADDRESS.matcher(name.toString()).matches()) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /**
   * The NUMA node of a PCI device from its {@code numa_node}: -1 (no NUMA information) and a
   * missing file are "none"; garbage is "none" plus a problem.
   *
   * @param pciDevice a PCI device's sysfs directory
   * @param problems where a sentence about garbage in the file is added
   * @return the NUMA node, or empty when there is none
   */
  public static OptionalInt numaNode(Path pciDevice, List<String> problems) {
    Optional<String> value = read(pciDevice.resolve("numa_node"));
    if (value.isEmpty()) {
      return OptionalInt.empty();
    }
    try {
      int node = Integer.parseInt(value.get());
      return node < 0 ? OptionalInt.empty() : OptionalInt.of(node);
    } catch (NumberFormatException e) {
      problems.add(
          pciDevice.resolve("numa_node")
              + " holds '"
              + value.get()
              + "', not a number; the device is advertised without NUMA affinity");
      return OptionalInt.empty();
    }
  }
}
