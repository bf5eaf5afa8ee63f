package io.github.deviceplugin4j.examples.infiniband;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.fixtures.InfinibandFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HcaScannerTest {
  @TempDir Path root;
  IbTrees t;

  @BeforeEach
  void buildTree() {
    t = new IbTrees(root);
  }

  @Test
  void fixtureHasTheKernelsLinks() throws Exception {
    assertThat(Files.readSymbolicLink(root.resolve("sys/class/infiniband/mlx5_0")).toString())
        .isEqualTo("../../devices/pci0000:16/0000:16:00.0/0000:17:00.0/infiniband/mlx5_0");
    assertThat(
            Files.readSymbolicLink(root.resolve("sys/class/infiniband/mlx5_0/device")).toString())
        .isEqualTo("../../../0000:17:00.0");
    assertThat(root.resolve("sys/class/infiniband_verbs/uverbs0/ibdev")).hasContent("mlx5_0");
  }

  @Test
  void findsEveryHcaWithNodesPortsAndNuma() {
    HcaScanner.Scan scan = new HcaScanner(root).scan(List.of());

    assertThat(scan.problems()).isEmpty();
    assertThat(scan.hcas())
        .extracting(Hca::name)
        .containsExactly("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3");
    Hca h1 = scan.hcas().get(1);
    assertThat(h1.pciAddress()).isEqualTo("0000:31:00.0");
    assertThat(h1.numaNode()).isEqualTo(OptionalInt.of(0));
    assertThat(h1.portStates()).isEqualTo(Map.of(1, "ACTIVE", 2, "ACTIVE"));
    assertThat(h1.deviceNodes())
        .containsExactly(
            "/dev/infiniband/uverbs1",
            "/dev/infiniband/umad1",
            "/dev/infiniband/umad2",
            "/dev/infiniband/rdma_cm");
    assertThat(h1.healthy()).isTrue();
    assertThat(scan.hcas().get(3).numaNode()).isEqualTo(OptionalInt.of(1));
  }

  @Test
  void nameIsMatchedExactlyNotAsAPrefix(@TempDir Path other) {
    SysfsTree tree = SysfsTree.create(other);
    InfinibandFixture ib = new InfinibandFixture(tree);
    for (int i = 0; i <= 10; i++) {
      ib.hca("mlx5_" + i, String.format("0000:%02x:00.0", 0x10 + i), 0, 1);
    }

    Hca h1 =
        new HcaScanner(other).scan(List.of("mlx5_1")).hcas().stream().findFirst().orElseThrow();

    assertThat(h1.deviceNodes())
        .containsExactly(
            "/dev/infiniband/uverbs1", "/dev/infiniband/umad1", "/dev/infiniband/rdma_cm");
  }

  @Test
  void healthNeedsOneActivePort() {
    t.ib.portState("mlx5_1", 1, InfinibandFixture.DOWN);
    assertThat(new HcaScanner(root).scan(List.of("mlx5_1")).hcas().get(0).healthy()).isTrue();

    t.ib.portState("mlx5_1", 2, "2: INIT");
    Hca h1 = new HcaScanner(root).scan(List.of("mlx5_1")).hcas().get(0);
    assertThat(h1.healthy()).isFalse();
    assertThat(h1.unhealthyReason().orElseThrow()).contains("no port is ACTIVE", "DOWN", "INIT");
  }

  @Test
  void garbagePortStateCountsAsDownWithAProblem() {
    t.ib.portState("mlx5_0", 1, "active!");

    HcaScanner.Scan scan = new HcaScanner(root).scan(List.of("mlx5_0"));

    assertThat(scan.hcas().get(0).healthy()).isFalse();
    assertThat(scan.problems()).singleElement().asString().contains("'active!'");
  }

  @Test
  void missingVerbsNodeMakesTheHcaUnhealthy() throws Exception {
    Files.delete(root.resolve("dev/infiniband/uverbs2"));

    HcaScanner.Scan scan = new HcaScanner(root).scan(List.of());

    Hca h2 = scan.hcas().get(2);
    assertThat(h2.healthy()).isFalse();
    assertThat(h2.missingNodes()).containsExactly("/dev/infiniband/uverbs2");
    assertThat(scan.hcas().get(3).healthy()).isTrue();
    assertThat(scan.problems()).singleElement().asString().contains("mlx5_2", "uverbs2");
  }

  @Test
  void hcaWithoutPciDeviceIsSkipped() {
    t.tree.delete(t.ib.hcaDir("mlx5_3").resolve("device"));

    HcaScanner.Scan scan = new HcaScanner(root).scan(List.of());

    assertThat(scan.hcas()).extracting(Hca::name).doesNotContain("mlx5_3").hasSize(3);
    assertThat(scan.problems()).singleElement().asString().contains("mlx5_3", "skipped");
  }

  @Test
  void garbageNumaGivesNoAffinityAndAProblem() {
    t.tree.write(root.resolve("sys/bus/pci/devices/0000:b1:00.0/numa_node"), "-\n");

    HcaScanner.Scan scan = new HcaScanner(root).scan(List.of("mlx5_2"));

    assertThat(scan.hcas().get(0).numaNode()).isEmpty();
    assertThat(scan.problems()).singleElement().asString().contains("numa_node");
  }

  @Test
  void configuredButAbsentHcaIsAProblem() {
    HcaScanner.Scan scan = new HcaScanner(root).scan(List.of("mlx5_0", "mlx5_9"));

    assertThat(scan.hcas()).extracting(Hca::name).containsExactly("mlx5_0");
    assertThat(scan.problems()).singleElement().asString().contains("mlx5_9 is configured but not");
  }

  @Test
  void noRdmaStackMeansNoHcasAndOneProblem(@TempDir Path empty) {
    SysfsTree.create(empty);

    HcaScanner.Scan scan = new HcaScanner(empty).scan(List.of());

    assertThat(scan.hcas()).isEmpty();
    assertThat(scan.problems()).singleElement().asString().contains("RDMA drivers");
  }
}
