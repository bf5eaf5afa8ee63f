package io.github.deviceplugin4j.examples.fpga;

import static io.github.deviceplugin4j.examples.fpga.DflTrees.AFU_A;
import static io.github.deviceplugin4j.examples.fpga.DflTrees.AFU_B;
import static io.github.deviceplugin4j.examples.fpga.DflTrees.IFACE_1;
import static io.github.deviceplugin4j.examples.fpga.DflTrees.IFACE_2;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DflScannerTest {
  @TempDir Path root;
  SysfsTree tree;
  DflFixture fpga;

  @BeforeEach
  void buildTree() {
    DflTrees t = new DflTrees(root, -1); // the second card has no NUMA information
    tree = t.tree;
    fpga = t.fpga;
  }

  @Test
  void fixtureHasTheKernelsSymlinks() throws Exception {
    Path classLink = root.resolve("sys/class/fpga_region/region0");
    assertThat(Files.isSymbolicLink(classLink)).isTrue();
    assertThat(Files.readSymbolicLink(classLink).toString())
        .isEqualTo("../../devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0/fpga_region/region0");
    Path busLink = root.resolve("sys/bus/pci/devices/0000:5e:00.0");
    assertThat(Files.readSymbolicLink(busLink).toString())
        .isEqualTo("../../../devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0");
    assertThat(classLink.resolve("dfl-port.0/afu_id")).hasContent(AFU_A);
  }

  @Test
  void findsEveryPortWithItsFunctionInterfaceNumaAndNode() {
    DflScanner.Scan scan = new DflScanner(root).scan();

    assertThat(scan.problems()).isEmpty();
    assertThat(scan.ports())
        .extracting(DflPort::name, DflPort::afuId, DflPort::region, DflPort::devNode)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("dfl-port.0", AFU_A, "region0", "/dev/dfl-port.0"),
            org.assertj.core.groups.Tuple.tuple("dfl-port.1", AFU_B, "region0", "/dev/dfl-port.1"),
            org.assertj.core.groups.Tuple.tuple("dfl-port.2", AFU_A, "region1", "/dev/dfl-port.2"));
    DflPort p0 = scan.ports().get(0);
    assertThat(p0.interfaceId()).contains(IFACE_1);
    assertThat(p0.numaNode()).isEqualTo(OptionalInt.of(1));
    assertThat(p0.errors()).contains(0L);
    assertThat(p0.healthy()).isTrue();
    DflPort p2 = scan.ports().get(2);
    assertThat(p2.interfaceId()).contains(IFACE_2);
    assertThat(p2.numaNode()).as("numa_node -1 means none").isEmpty();
  }

  @Test
  void portWithErrorBitsIsUnhealthyWithTheFix() {
    fpga.portErrors(1, "0x4");

    DflPort p1 = new DflScanner(root).scan().ports().get(1);

    assertThat(p1.healthy()).isFalse();
    assertThat(p1.errors()).contains(4L);
    assertThat(p1.unhealthyReason().orElseThrow())
        .contains("dfl-port.1", "0x4", "errors/errors", "reset the port");
  }

  @Test
  void crashedFirmwareIsUnhealthy() {
    fpga.afuId(0, DflFixture.CRASHED_AFU_ID);

    DflPort p0 = new DflScanner(root).scan().ports().get(0);

    assertThat(p0.healthy()).isFalse();
    assertThat(p0.unhealthyReason().orElseThrow()).contains("firmware has crashed");
  }

  @Test
  void missingAfuIdSkipsThePortWithAProblem() throws Exception {
    Files.delete(fpga.portDir(1).resolve("afu_id"));

    DflScanner.Scan scan = new DflScanner(root).scan();

    assertThat(scan.ports()).extracting(DflPort::name).containsExactly("dfl-port.0", "dfl-port.2");
    assertThat(scan.problems())
        .singleElement()
        .asString()
        .contains("afu_id", "dfl-port.1 is skipped");
  }

  @Test
  void garbageAfuIdSkipsThePortWithAProblem() {
    tree.write(fpga.portDir(0).resolve("afu_id"), "not-an-id\n");

    DflScanner.Scan scan = new DflScanner(root).scan();

    assertThat(scan.ports()).extracting(DflPort::name).doesNotContain("dfl-port.0");
    assertThat(scan.problems()).singleElement().asString().contains("'not-an-id'", "skipped");
  }

  @Test
  void garbageErrorBitsMakeThePortUnhealthyWithAProblem() {
    tree.write(fpga.portDir(2).resolve("errors/errors"), "\u0000\u0001garbage\n");

    DflScanner.Scan scan = new DflScanner(root).scan();

    DflPort p2 = scan.ports().get(2);
    assertThat(p2.healthy()).isFalse();
    assertThat(p2.errors()).isEmpty();
    assertThat(scan.problems())
        .singleElement()
        .asString()
        .contains("dfl-port.2 is reported unhealthy");
  }

  @Test
  void kernelWithoutErrorReportingCountsAsNoErrors() {
    tree.delete(fpga.portDir(0).resolve("errors"));

    DflPort p0 = new DflScanner(root).scan().ports().get(0);

    assertThat(p0.errors()).contains(0L);
    assertThat(p0.healthy()).isTrue();
  }

  @Test
  void missingDeviceNodeMakesThePortUnhealthy() {
    tree.delete(root.resolve("dev/dfl-port.1"));

    DflScanner.Scan scan = new DflScanner(root).scan();

    assertThat(scan.ports().get(1).healthy()).isFalse();
    assertThat(scan.ports().get(1).unhealthyReason().orElseThrow()).contains("/dev/dfl-port.1");
    assertThat(scan.problems()).singleElement().asString().contains("device node");
  }

  @Test
  void garbageNumaNodeGivesNoAffinityAndAProblem() {
    tree.write(root.resolve("sys/bus/pci/devices/0000:5e:00.0/numa_node"), "zero\n");

    DflScanner.Scan scan = new DflScanner(root).scan();

    assertThat(scan.ports().get(0).numaNode()).isEmpty();
    assertThat(scan.ports().get(0).healthy()).isTrue();
    assertThat(scan.problems()).anySatisfy(p -> assertThat(p).contains("numa_node", "'zero'"));
  }

  @Test
  void garbageInterfaceIdLeavesTheRegionWithoutInterface() {
    tree.write(
        root.resolve("sys/class/fpga_region/region101/compat_id"), "ffff\n"); // card 2's PR region

    DflScanner.Scan scan = new DflScanner(root).scan();

    assertThat(scan.ports().get(2).interfaceId()).isEmpty();
    assertThat(scan.ports().get(0).interfaceId()).contains(IFACE_1);
    assertThat(scan.problems()).singleElement().asString().contains("compat_id", "region1");
  }

  @Test
  void noDflDriverMeansNoPortsAndOneProblem(@TempDir Path empty) {
    SysfsTree.create(empty);

    DflScanner.Scan scan = new DflScanner(empty).scan();

    assertThat(scan.ports()).isEmpty();
    assertThat(scan.problems()).singleElement().asString().contains("DFL driver");
  }

  @Test
  void strayEntriesAreIgnored() {
    tree.mkdirs(root.resolve("sys/class/fpga_region/region0/dfl-port.x"));
    tree.write(root.resolve("sys/class/fpga_region/README"), "not a region\n");

    DflScanner.Scan scan = new DflScanner(root).scan();

    assertThat(scan.ports()).hasSize(3);
    assertThat(scan.problems()).isEmpty();
  }
}
