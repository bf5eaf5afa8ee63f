package io.github.deviceplugin4j.examples.nic;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SriovScannerTest {
  @TempDir Path root;
  SriovTrees t;

  @BeforeEach
  void buildTree() {
    t = new SriovTrees(root);
  }

  @Test
  void fixtureHasTheKernelsLinks() throws Exception {
    Path pf = root.resolve("sys/bus/pci/devices/0000:3b:00.0");
    assertThat(Files.readSymbolicLink(pf).toString())
        .isEqualTo("../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0");
    assertThat(Files.readSymbolicLink(pf.resolve("virtfn1")).toString())
        .isEqualTo("../0000:3b:02.1");
    assertThat(Files.readSymbolicLink(pf.resolve("virtfn1").resolve("physfn")).toString())
        .isEqualTo("../0000:3b:00.0");
    assertThat(Files.readSymbolicLink(pf.resolve("driver")).toString())
        .isEqualTo("../../../../bus/pci/drivers/ice");
    assertThat(pf.resolve("virtfn0/iommu_group").toRealPath().getParent())
        .isEqualTo(root.resolve("sys/kernel/iommu_groups").toRealPath());
    assertThat(Files.readSymbolicLink(root.resolve("sys/class/net/ens1f0")).toString())
        .isEqualTo("../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/net/ens1f0");
  }

  @Test
  void findsEveryVfWithItsIdsDriverGroupAndNuma() {
    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0", "ens1f1"));

    assertThat(scan.problems()).isEmpty();
    assertThat(scan.vfs())
        .extracting(VirtualFunction::address)
        .containsExactly(
            "0000:3b:02.0",
            "0000:3b:02.1",
            "0000:3b:02.2",
            "0000:3b:02.3",
            "0000:86:02.0",
            "0000:86:02.1");
    VirtualFunction net = scan.vfs().get(1);
    assertThat(net.pfName()).isEqualTo("ens1f0");
    assertThat(net.pfAddress()).isEqualTo("0000:3b:00.0");
    assertThat(net.index()).isEqualTo(1);
    assertThat(net.vendor()).isEqualTo("8086");
    assertThat(net.device()).isEqualTo("1889");
    assertThat(net.driver()).contains("iavf");
    assertThat(net.isVfio()).isFalse();
    assertThat(net.numaNode()).isEqualTo(OptionalInt.of(0));
    assertThat(net.pfLinkUp()).isTrue();
    VirtualFunction vfio = scan.vfs().get(4);
    assertThat(vfio.isVfio()).isTrue();
    assertThat(vfio.iommuGroup()).isPresent();
    assertThat(vfio.vfioNodePresent()).isTrue();
    assertThat(vfio.numaNode()).isEqualTo(OptionalInt.of(1));
  }

  @Test
  void pfLinkStateIsRead() {
    t.nic.linkState("ens1f0", false);

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0", "ens1f1"));

    assertThat(scan.vfs())
        .filteredOn(v -> v.pfName().equals("ens1f0"))
        .allMatch(v -> !v.pfLinkUp());
    assertThat(scan.vfs())
        .filteredOn(v -> v.pfName().equals("ens1f1"))
        .allMatch(VirtualFunction::pfLinkUp);
  }

  @Test
  void unknownPfIsAProblemNotACrash() {
    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens9f9", "ens1f1"));

    assertThat(scan.vfs()).hasSize(2);
    assertThat(scan.problems()).singleElement().asString().contains("PF ens9f9 not found");
  }

  @Test
  void garbageNumVfsSkipsThePf() {
    t.tree.write(t.nic.pf("ens1f0").resolve("sriov_numvfs"), "many\n");

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0"));

    assertThat(scan.vfs()).isEmpty();
    assertThat(scan.problems()).singleElement().asString().contains("'many'");
  }

  @Test
  void vfWithoutDriverIsSkipped() {
    t.tree.delete(t.nic.vfDir("0000:3b:02.2").resolve("driver"));

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0"));

    assertThat(scan.vfs())
        .extracting(VirtualFunction::address)
        .doesNotContain("0000:3b:02.2")
        .hasSize(3);
    assertThat(scan.problems()).singleElement().asString().contains("no driver bound");
  }

  @Test
  void vfWithGarbageIdsIsSkipped() {
    t.tree.write(t.nic.vfDir("0000:3b:02.0").resolve("device"), "0xZZZZ\n");

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0"));

    assertThat(scan.vfs()).hasSize(3);
    assertThat(scan.problems()).singleElement().asString().contains("'0xZZZZ'", "skipped");
  }

  @Test
  void vfioVfWithoutIommuGroupIsSkippedAndMissingNodeIsNoted() throws Exception {
    t.tree.delete(t.nic.vfDir("0000:86:02.0").resolve("iommu_group"));
    String group =
        t.nic.vfDir("0000:86:02.1").resolve("iommu_group").toRealPath().getFileName().toString();
    Files.delete(root.resolve("dev/vfio").resolve(group));

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f1"));

    assertThat(scan.vfs())
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.address()).isEqualTo("0000:86:02.1");
              assertThat(v.vfioNodePresent()).isFalse();
            });
    assertThat(scan.problems()).hasSize(2);
    assertThat(scan.problems().get(0)).contains("no iommu_group", "intel_iommu=on");
    assertThat(scan.problems().get(1)).contains("/dev/vfio/" + group + " is missing");
  }

  @Test
  void danglingVirtfnLinkIsAProblem() {
    t.tree.delete(t.nic.vfDir("0000:3b:02.3"));

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0"));

    assertThat(scan.vfs()).hasSize(3);
    assertThat(scan.problems()).singleElement().asString().contains("virtfn3", "does not resolve");
  }

  @Test
  void removedVfsLeaveNothingBehind() {
    t.nic.removeVirtualFunctions("ens1f0");

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0"));

    assertThat(scan.vfs()).isEmpty();
    assertThat(scan.problems()).isEmpty();
  }

  @Test
  void unreadableOperstateCountsAsDown() throws Exception {
    Files.delete(root.resolve("sys/class/net/ens1f0/operstate"));

    SriovScanner.Scan scan = new SriovScanner(root).scan(List.of("ens1f0"));

    assertThat(scan.vfs()).hasSize(4).allMatch(v -> !v.pfLinkUp());
    assertThat(scan.problems()).singleElement().asString().contains("operstate");
  }
}
