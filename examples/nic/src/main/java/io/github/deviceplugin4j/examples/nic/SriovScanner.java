package io.github.deviceplugin4j.examples.nic;

import io.github.deviceplugin4j.examples.common.Sysfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * Finds the virtual functions of physical functions the way the SR-IOV network device plugin does:
 * {@code /sys/class/net/<pf>/device} is the PF's PCI device; its {@code sriov_numvfs} says how many
 * VFs exist and each {@code virtfnN} link leads to one (whose {@code physfn} leads back); a VF's
 * {@code vendor}, {@code device}, {@code driver} link, {@code iommu_group} link and {@code
 * numa_node} describe it; the PF's {@code net/<pf>/operstate} gives the link state.
 *
 * <p>A scan never throws: a PF or VF whose files are missing or hold garbage is skipped, and each
 * finding is listed in {@link Scan#problems()} for the caller to log.
 */
public final class SriovScanner {
  private static final Pattern VIRTFN = Pattern.compile("virtfn\\d{1,9}");
  private static final Pattern HEX_ID = Pattern.compile("(0x)?[0-9a-fA-F]{4}");

  private final Path root;

  /**
   * A scanner of a root directory.
   *
   * @param root where {@code sys/} and {@code dev/} are, {@code /} on a node
   */
  public SriovScanner(Path root) {
    this.root = Objects.requireNonNull(root, "root");
  }

  /**
   * The result of one scan.
   *
   * @param vfs the VFs found, by PF in the order asked, then by VF index
   * @param problems what was wrong in the tree, one sentence each
   */
  public record Scan(List<VirtualFunction> vfs, List<String> problems) {
    /**
     * Copies the lists.
     *
     * @param vfs see {@link #vfs()}
     * @param problems see {@link #problems()}
     */
    public Scan {
      vfs = List.copyOf(vfs);
      problems = List.copyOf(problems);
    }
  }

  /**
   * Reads the VFs of some PFs.
   *
   * @param pfNames PF interface names
   * @return VFs and problems
   */
  public Scan scan(Collection<String> pfNames) {
    List<VirtualFunction> vfs = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (String pfName : pfNames) {
      scanPf(pfName, vfs, problems);
    }
    return new Scan(vfs, problems);
  }

  private void scanPf(String pfName, List<VirtualFunction> out, List<String> problems) {
    Path netdev = root.resolve("sys/class/net").resolve(pfName);
    Optional<Path> pf = Sysfs.real(netdev.resolve("device"));
    if (pf.isEmpty()) {
      problems.add(
          "PF "
              + pfName
              + " not found ("
              + netdev
              + "/device does not resolve); its VFs are skipped");
      return;
    }
    String pfAddress = pf.get().getFileName().toString();
    Optional<String> numVfs = Sysfs.read(pf.get().resolve("sriov_numvfs"));
    if (numVfs.isEmpty()) {
      problems.add(
          "PF " + pfName + " (" + pfAddress + ") has no sriov_numvfs: it is not SR-IOV capable");
      return;
    }
    int expected;
    try {
      expected = Integer.parseInt(numVfs.get());
    } catch (NumberFormatException e) {
      problems.add(
          "PF "
              + pfName
              + ": sriov_numvfs holds '"
              + numVfs.get()
              + "', not a number; its VFs are skipped");
      return;
    }
    String operstate = Sysfs.read(netdev.resolve("operstate")).orElse(null);
    if (operstate == null) {
      problems.add("PF " + pfName + ": cannot read operstate; its VFs are reported unhealthy");
    }
    boolean linkUp = "up".equals(operstate);
    List<Path> links = new ArrayList<>(Sysfs.list(pf.get(), VIRTFN));
    links.sort(
        Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString().substring(6))));
    if (links.size() != expected) {
      problems.add(
          "PF "
              + pfName
              + ": sriov_numvfs says "
              + expected
              + " but "
              + links.size()
              + " virtfn links exist; using the links");
    }
    for (Path link : links) {
      int index = Integer.parseInt(link.getFileName().toString().substring(6));
      readVf(pfName, pf.get(), index, link, linkUp, problems).ifPresent(out::add);
    }
  }

  private Optional<VirtualFunction> readVf(
      String pfName, Path pf, int index, Path link, boolean linkUp, List<String> problems) {
    String what = "VF " + index + " of " + pfName;
    Optional<Path> vf = Sysfs.real(link);
    if (vf.isEmpty()) {
      problems.add(what + ": " + link + " does not resolve; skipped");
      return Optional.empty();
    }
    String address = vf.get().getFileName().toString();
    if (!Sysfs.PCI_ADDRESS.matcher(address).matches()) {
      problems.add(what + ": " + link + " leads to " + address + ", not a PCI device; skipped");
      return Optional.empty();
    }
    Optional<Path> back = Sysfs.real(vf.get().resolve("physfn"));
    if (back.isEmpty() || !back.get().equals(pf)) {
      problems.add(what + " (" + address + "): physfn does not lead back to the PF; skipped");
      return Optional.empty();
    }
    Optional<String> vendor = Sysfs.read(vf.get().resolve("vendor"));
    Optional<String> device = Sysfs.read(vf.get().resolve("device"));
    if (vendor.isEmpty()
        || device.isEmpty()
        || !HEX_ID.matcher(vendor.get()).matches()
        || !HEX_ID.matcher(device.get()).matches()) {
      problems.add(
          what
              + " ("
              + address
              + "): vendor/device read '"
              + vendor.orElse("<missing>")
              + "'/'"
              + device.orElse("<missing>")
              + "', not PCI IDs; skipped");
      return Optional.empty();
    }
    Optional<String> driver =
        Sysfs.real(vf.get().resolve("driver")).map(p -> p.getFileName().toString());
    if (driver.isEmpty()) {
      problems.add(what + " (" + address + ") has no driver bound; skipped until one is");
      return Optional.empty();
    }
    Optional<String> group =
        Sysfs.real(vf.get().resolve("iommu_group")).map(p -> p.getFileName().toString());
    boolean vfio = "vfio-pci".equals(driver.get());
    boolean vfioNode = false;
    if (vfio) {
      if (group.isEmpty()) {
        problems.add(
            what
                + " ("
                + address
                + ") is bound to vfio-pci but has no iommu_group (is the IOMMU on? intel_iommu=on"
                + " or amd_iommu=on); skipped");
        return Optional.empty();
      }
      vfioNode = Files.exists(root.resolve("dev/vfio").resolve(group.get()));
      if (!vfioNode) {
        problems.add(
            what
                + " ("
                + address
                + "): /dev/vfio/"
                + group.get()
                + " is missing; reported unhealthy");
      }
    }
    OptionalInt numa = Sysfs.numaNode(vf.get(), problems);
    return Optional.of(
        new VirtualFunction(
            address,
            pfName,
            pf.getFileName().toString(),
            index,
            NicPool.hexId(vendor.get()),
            NicPool.hexId(device.get()),
            driver,
            group,
            vfioNode,
            numa,
            linkUp));
  }
}
