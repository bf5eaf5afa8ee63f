package io.github.deviceplugin4j.examples.infiniband;

import io.github.deviceplugin4j.examples.common.Sysfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds RDMA HCAs the way the RDMA device plugins do: each entry of {@code /sys/class/infiniband}
 * is an HCA; its {@code device} link leads to the PCI function (whose {@code numa_node} gives the
 * NUMA node); {@code ports/<n>/state} reads like {@code 4: ACTIVE}; the verbs device is the {@code
 * /sys/class/infiniband_verbs/uverbsN} whose {@code ibdev} names the HCA, the MAD devices the
 * {@code /sys/class/infiniband_mad/umadN} whose {@code ibdev} names it (one per port); the
 * container also needs {@code /dev/infiniband/rdma_cm}. Names are compared exactly ({@code mlx5_1}
 * is not {@code mlx5_10}). The {@code issmN} nodes are left out: they let a process act as subnet
 * manager, which a workload should not.
 *
 * <p>A scan never throws: an HCA whose files are missing or hold garbage is skipped or reported
 * unhealthy, and each finding is listed in {@link Scan#problems()} for the caller to log.
 */
public final class HcaScanner {
  private static final Pattern UVERBS = Pattern.compile("uverbs\\d+");
  private static final Pattern UMAD = Pattern.compile("umad\\d+");
  private static final Pattern PORT = Pattern.compile("\\d{1,9}");
  private static final Pattern STATE = Pattern.compile("(\\d{1,9}):\\s*([A-Z_]+)");
  private static final Pattern ANY = Pattern.compile("[^.].*");

  private final Path root;

  /**
   * A scanner of a root directory.
   *
   * @param root where {@code sys/} and {@code dev/} are, {@code /} on a node
   */
  public HcaScanner(Path root) {
    this.root = Objects.requireNonNull(root, "root");
  }

  /**
   * The result of one scan.
   *
   * @param hcas the HCAs found, by name
   * @param problems what was wrong in the tree, one sentence each
   */
  public record Scan(List<Hca> hcas, List<String> problems) {
    /**
     * Copies the lists.
     *
     * @param hcas see {@link #hcas()}
     * @param problems see {@link #problems()}
     */
    public Scan {
      hcas = List.copyOf(hcas);
      problems = List.copyOf(problems);
    }
  }

  /**
   * Reads the tree.
   *
   * @param only HCA names to read; empty for all
   * @return HCAs and problems
   */
  public Scan scan(Collection<String> only) {
    List<Hca> hcas = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    Path classDir = root.resolve("sys/class/infiniband");
    if (!Files.isDirectory(classDir)) {
      problems.add(classDir + " does not exist: are the RDMA drivers (ib_core, mlx5_ib) loaded?");
      return new Scan(hcas, problems);
    }
    List<String> rdmaCm = new ArrayList<>();
    List<String> rdmaCmMissing = new ArrayList<>();
    node("rdma_cm", rdmaCm, rdmaCmMissing);
    for (Path entry : Sysfs.list(classDir, ANY)) {
      String name = entry.getFileName().toString();
      if (!only.isEmpty() && !only.contains(name)) {
        continue;
      }
      readHca(entry, name, rdmaCm, rdmaCmMissing, problems).ifPresent(hcas::add);
    }
    for (String wanted : only) {
      if (hcas.stream().noneMatch(h -> h.name().equals(wanted))) {
        problems.add("HCA " + wanted + " is configured but not in " + classDir);
      }
    }
    return new Scan(hcas, problems);
  }

  private Optional<Hca> readHca(
      Path entry,
      String name,
      List<String> rdmaCm,
      List<String> rdmaCmMissing,
      List<String> problems) {
    Optional<Path> pci = Sysfs.real(entry.resolve("device"));
    if (pci.isEmpty() || !Sysfs.PCI_ADDRESS.matcher(pci.get().getFileName().toString()).matches()) {
      problems.add(
          "HCA "
              + name
              + ": "
              + entry.resolve("device")
              + " does not lead to a PCI function; skipped");
      return Optional.empty();
    }
    OptionalInt numa = Sysfs.numaNode(pci.get(), problems);
    Map<Integer, String> ports = new TreeMap<>();
    for (Path port : Sysfs.list(entry.resolve("ports"), PORT)) {
      int number = Integer.parseInt(port.getFileName().toString());
      String raw = Sysfs.read(port.resolve("state")).orElse("<missing>");
      Matcher m = STATE.matcher(raw);
      if (m.matches()) {
        ports.put(number, m.group(2));
      } else {
        ports.put(number, "?");
        problems.add(
            "HCA "
                + name
                + " port "
                + number
                + ": state reads '"
                + raw
                + "'; the port counts as down");
      }
    }
    if (ports.isEmpty()) {
      problems.add("HCA " + name + " has no ports/ directory; reported unhealthy");
    }
    List<String> nodes = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    charDevices("infiniband_verbs", UVERBS, name, nodes, missing);
    charDevices("infiniband_mad", UMAD, name, nodes, missing);
    nodes.addAll(rdmaCm);
    missing.addAll(rdmaCmMissing);
    if (nodes.stream().noneMatch(n -> n.contains("/uverbs"))
        && missing.stream().noneMatch(n -> n.contains("/uverbs"))) {
      problems.add(
          "HCA " + name + " has no uverbs device (is ib_uverbs loaded?); reported unhealthy");
    }
    if (!missing.isEmpty()) {
      problems.add(
          "HCA " + name + ": device nodes missing under " + root.resolve("dev") + ": " + missing);
    }
    return Optional.of(
        new Hca(name, pci.get().getFileName().toString(), numa, ports, nodes, missing));
  }

  private void charDevices(
      String clazz, Pattern pattern, String hca, List<String> nodes, List<String> missing) {
    for (Path dev : Sysfs.list(root.resolve("sys/class").resolve(clazz), pattern)) {
      if (Sysfs.read(dev.resolve("ibdev")).filter(hca::equals).isPresent()) {
        node(dev.getFileName().toString(), nodes, missing);
      }
    }
  }

  private void node(String name, List<String> nodes, List<String> missing) {
    String host = "/dev/infiniband/" + name;
    if (Files.exists(root.resolve("dev/infiniband").resolve(name))) {
      nodes.add(host);
    } else {
      missing.add(host);
    }
  }
}
