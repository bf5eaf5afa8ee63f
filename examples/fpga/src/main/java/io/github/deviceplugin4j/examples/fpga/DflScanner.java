package io.github.deviceplugin4j.examples.fpga;

import io.github.deviceplugin4j.examples.common.Sysfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * Finds FPGA ports the way the Linux DFL driver lays them out: every {@code
 * /sys/class/fpga_region/regionN} that holds {@code dfl-port.M} entries is a card's container
 * region; its {@code dfl-fme.K} holds the PR region whose {@code compat_id} is the interface ID;
 * each port's {@code afu_id} names the accelerator loaded in it; {@code errors/errors} holds its
 * error bits; the device node is {@code /dev/dfl-port.M}; the NUMA node is the card's PCI device's
 * {@code numa_node}.
 *
 * <p>A scan never throws: a port whose files are missing or hold garbage is skipped or reported
 * unhealthy, and each such finding is listed in {@link Scan#problems()} for the caller to log.
 *
 * <pre>{@code
 * DflScanner.Scan scan = new DflScanner(Path.of("/")).scan();
 * scan.ports().forEach(p -> System.out.println(p.name() + " " + p.afuId()));
 * }</pre>
 */
public final class DflScanner {
  private static final Pattern REGION = Pattern.compile("region\\d{1,9}");
  private static final Pattern PORT = Pattern.compile("dfl-port\\.\\d{1,9}");
  private static final Pattern FME = Pattern.compile("dfl-fme\\.\\d+");
  private static final Pattern FME_REGION = Pattern.compile("dfl-fme-region\\.\\d+");
  private static final Pattern UUID_HEX = Pattern.compile("[0-9a-f]{32}");

  private final Path root;

  /**
   * A scanner of a root directory.
   *
   * @param root where {@code sys/} and {@code dev/} are, {@code /} on a node
   */
  public DflScanner(Path root) {
    this.root = Objects.requireNonNull(root, "root");
  }

  /**
   * The result of one scan.
   *
   * @param ports the usable ports, sorted by port number
   * @param problems what was wrong in the tree, one sentence each
   */
  public record Scan(List<DflPort> ports, List<String> problems) {
    /**
     * Copies the lists.
     *
     * @param ports see {@link #ports()}
     * @param problems see {@link #problems()}
     */
    public Scan {
      ports = List.copyOf(ports);
      problems = List.copyOf(problems);
    }
  }

  /**
   * Reads the tree.
   *
   * @return ports and problems
   */
  public Scan scan() {
    List<DflPort> ports = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    Path classDir = root.resolve("sys/class/fpga_region");
    if (!Files.isDirectory(classDir)) {
      problems.add(classDir + " does not exist: is the DFL driver (dfl-pci) loaded?");
      return new Scan(ports, problems);
    }
    for (Path region : Sysfs.list(classDir, REGION)) {
      List<Path> portDirs = Sysfs.list(region, PORT);
      if (portDirs.isEmpty()) {
        continue; // a PR region or an empty card
      }
      Optional<String> interfaceId = interfaceId(region, problems);
      Optional<Path> pci = Sysfs.pciDeviceOf(region);
      OptionalInt numa = pci.map(p -> Sysfs.numaNode(p, problems)).orElse(OptionalInt.empty());
      Optional<String> pciAddress = pci.map(p -> p.getFileName().toString());
      for (Path port : portDirs) {
        readPort(region, port, interfaceId, numa, pciAddress, problems).ifPresent(ports::add);
      }
    }
    ports.sort(Comparator.comparingInt(p -> Integer.parseInt(p.name().substring(9))));
    return new Scan(ports, problems);
  }

  private Optional<DflPort> readPort(
      Path region,
      Path port,
      Optional<String> interfaceId,
      OptionalInt numa,
      Optional<String> pciAddress,
      List<String> problems) {
    String name = port.getFileName().toString();
    Path afuFile = port.resolve("afu_id");
    Optional<String> afu = Sysfs.read(afuFile).map(s -> s.toLowerCase(Locale.ROOT));
    if (afu.isEmpty()) {
      problems.add("cannot read " + afuFile + "; " + name + " is skipped");
      return Optional.empty();
    }
    if (!UUID_HEX.matcher(afu.get()).matches()) {
      problems.add(
          afuFile + " holds '" + afu.get() + "', not a 32-digit hex ID; " + name + " is skipped");
      return Optional.empty();
    }
    Optional<Long> errors = Optional.of(0L);
    Path errorsFile = port.resolve("errors/errors");
    if (Files.isDirectory(port.resolve("errors"))) {
      errors = parseHex(Sysfs.read(errorsFile).orElse(""));
      if (errors.isEmpty()) {
        problems.add(
            "cannot read error bits from "
                + errorsFile
                + " ('"
                + Sysfs.read(errorsFile).orElse("<missing>")
                + "'); "
                + name
                + " is reported unhealthy");
      }
    }
    String devNode = "/dev/" + name;
    boolean present = Files.exists(root.resolve("dev").resolve(name));
    if (!present) {
      problems.add(
          "device node "
              + root.resolve("dev").resolve(name)
              + " is missing; "
              + name
              + " is reported unhealthy");
    }
    return Optional.of(
        new DflPort(
            name,
            port,
            region.getFileName().toString(),
            afu.get(),
            interfaceId,
            devNode,
            present,
            numa,
            pciAddress,
            errors));
  }

  private static Optional<String> interfaceId(Path region, List<String> problems) {
    for (Path fme : Sysfs.list(region, FME)) {
      for (Path fmeRegion : Sysfs.list(fme, FME_REGION)) {
        for (Path pr : Sysfs.list(fmeRegion.resolve("fpga_region"), REGION)) {
          Path file = pr.resolve("compat_id");
          Optional<String> id = Sysfs.read(file).map(s -> s.toLowerCase(Locale.ROOT));
          if (id.isPresent() && UUID_HEX.matcher(id.get()).matches()) {
            return id;
          }
          problems.add(
              file
                  + " holds '"
                  + id.orElse("<missing>")
                  + "', not a 32-digit hex interface ID; the ports of "
                  + region.getFileName()
                  + " have no region interface");
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  private static Optional<Long> parseHex(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    if (v.startsWith("0x")) {
      v = v.substring(2);
    }
    if (v.isEmpty() || v.length() > 16) {
      return Optional.empty();
    }
    try {
      return Optional.of(Long.parseUnsignedLong(v, 16));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
