package io.github.deviceplugin4j.examples.fpga;

import static io.github.deviceplugin4j.examples.fpga.DflTrees.AFU_A;
import static io.github.deviceplugin4j.examples.fpga.DflTrees.AFU_B;
import static io.github.deviceplugin4j.examples.fpga.DflTrees.IFACE_1;
import static io.github.deviceplugin4j.examples.fpga.DflTrees.IFACE_2;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FpgaBackendTest {
  @TempDir Path root;
  SysfsTree tree;
  DflFixture fpga;

  @BeforeEach
  void buildTree() {
    DflTrees t = new DflTrees(root, 0);
    tree = t.tree;
    fpga = t.fpga;
  }

  @Test
  void afModeHasOneResourcePerAcceleratorAndOneDevicePerPort() throws Exception {
    List<FpgaBackend> backends = FpgaBackend.discover(FpgaConfig.defaults(root));

    assertThat(backends)
        .extracting(FpgaBackend::resourceName)
        .containsExactly("fpga.example.com/af-" + AFU_A, "fpga.example.com/af-" + AFU_B);
    List<Device> a = backends.get(0).devices();
    assertThat(a).extracting(Device::id).containsExactly("dfl-port.0", "dfl-port.2");
    Device port0 = a.get(0);
    assertThat(port0.health()).isEqualTo(Health.HEALTHY);
    assertThat(port0.numaNodes()).containsExactly(1);
    assertThat(port0.allocation().deviceNodes()).containsExactly(DeviceNode.rw("/dev/dfl-port.0"));
    assertThat(port0.allocation().env()).isEqualTo(Map.of("DFL_PORTS", "dfl-port.0"));
    assertThat(a.get(1).numaNodes()).containsExactly(0);
    assertThat(backends.get(1).devices()).extracting(Device::id).containsExactly("dfl-port.1");
  }

  @Test
  void regionModeHasOneResourcePerInterface() throws Exception {
    FpgaConfig config =
        FpgaConfig.parse(new String[] {"--mode=region", "--root=" + root}, Map.of());

    List<FpgaBackend> backends = FpgaBackend.discover(config);

    assertThat(backends)
        .extracting(FpgaBackend::resourceName)
        .containsExactly(
            "fpga.example.com/region-" + IFACE_1, "fpga.example.com/region-" + IFACE_2);
    assertThat(backends.get(0).devices())
        .extracting(Device::id)
        .containsExactly("dfl-port.0", "dfl-port.1");
  }

  @Test
  void errorBitsTurnThePortUnhealthyAndClearingThemHealthyAgain() throws Exception {
    FpgaBackend a = new FpgaBackend(FpgaConfig.defaults(root), AFU_A);
    fpga.portErrors(2, "0x10");

    assertThat(health(a.devices(), "dfl-port.2")).isEqualTo(Health.UNHEALTHY);

    fpga.portErrors(2, "0x0");
    assertThat(health(a.devices(), "dfl-port.2")).isEqualTo(Health.HEALTHY);
  }

  @Test
  void crashedPortStaysInItsResourceAsUnhealthy() throws Exception {
    FpgaBackend a = new FpgaBackend(FpgaConfig.defaults(root), AFU_A);
    a.devices();
    fpga.afuId(0, DflFixture.CRASHED_AFU_ID);

    List<Device> devices = a.devices();

    assertThat(devices).extracting(Device::id).containsExactly("dfl-port.0", "dfl-port.2");
    assertThat(health(devices, "dfl-port.0")).isEqualTo(Health.UNHEALTHY);
  }

  @Test
  void reprogrammedPortLeavesTheResource() throws Exception {
    FpgaBackend a = new FpgaBackend(FpgaConfig.defaults(root), AFU_A);
    FpgaBackend b = new FpgaBackend(FpgaConfig.defaults(root), AFU_B);
    a.devices();
    fpga.afuId(2, AFU_B);

    assertThat(a.devices()).extracting(Device::id).containsExactly("dfl-port.0");
    assertThat(b.devices()).extracting(Device::id).containsExactly("dfl-port.1", "dfl-port.2");
  }

  @Test
  void malformedPortIsSkippedAndItsProblemKept() throws Exception {
    FpgaBackend a = new FpgaBackend(FpgaConfig.defaults(root), AFU_A);
    tree.write(fpga.portDir(0).resolve("afu_id"), "\n");

    assertThat(a.devices()).extracting(Device::id).containsExactly("dfl-port.2");
    assertThat(a.problems()).singleElement().asString().contains("dfl-port.0 is skipped");

    fpga.afuId(0, AFU_A);
    assertThat(a.devices()).extracting(Device::id).containsExactly("dfl-port.0", "dfl-port.2");
    assertThat(a.problems()).isEmpty();
  }

  @Test
  void preStartPassesOnHealthyPortsAndNamesTheFixOtherwise() throws Exception {
    FpgaBackend a = new FpgaBackend(FpgaConfig.defaults(root), AFU_A);
    List<Device> devices = a.devices();
    a.preStart(devices);

    fpga.portErrors(2, "0x4");

    assertThatThrownBy(() -> a.preStart(devices))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("dfl-port.2")
        .hasMessageContaining("0x4")
        .hasMessageContaining("reset the port")
        .hasMessageNotContaining("dfl-port.0");
  }

  @Test
  void discoveryOnANodeWithoutFpgasFindsNothing(@TempDir Path empty) {
    SysfsTree.create(empty);

    assertThat(FpgaBackend.discover(FpgaConfig.defaults(empty))).isEmpty();
  }

  private static Health health(List<Device> devices, String id) {
    return devices.stream().filter(d -> d.id().equals(id)).findFirst().orElseThrow().health();
  }
}
