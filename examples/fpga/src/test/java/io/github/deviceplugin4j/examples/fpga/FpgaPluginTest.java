package io.github.deviceplugin4j.examples.fpga;

import static io.github.deviceplugin4j.examples.fpga.DflTrees.AFU_A;
import static io.github.deviceplugin4j.examples.fpga.DflTrees.AFU_B;
import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.WAIT;
import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.unhealthy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import io.github.deviceplugin4j.examples.testing.PluginUnderTest;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The FPGA plugin against the fake kubelet, over real Unix sockets. */
class FpgaPluginTest {
  static final String RES_A = "fpga.example.com/af-" + AFU_A;
  static final String RES_B = "fpga.example.com/af-" + AFU_B;

  @TempDir Path root;
  @TempDir Path run;
  DflFixture fpga;
  SysfsTree tree;
  PluginUnderTest plugin;
  FakeKubelet kubelet;
  DevicePluginHost host;
  List<FpgaBackend> backends;

  @BeforeEach
  void start() {
    DflTrees t = new DflTrees(root, 0);
    tree = t.tree;
    fpga = t.fpga;
    // A long poll interval: the tests trigger every rescan themselves.
    FpgaConfig config =
        new FpgaConfig(
            root,
            FpgaConfig.Mode.AF,
            "fpga.example.com",
            Duration.ofHours(1),
            run.resolve("ready"));
    backends = FpgaBackend.discover(config);
    plugin =
        PluginUnderTest.start(
            run, backends, new ReadinessFile(config.readyFile(), List.of(RES_A, RES_B)));
    kubelet = plugin.kubelet();
    host = plugin.host();
  }

  @AfterEach
  void stop() {
    if (plugin != null) {
      plugin.close();
    }
  }

  FpgaBackend backend(String resource) {
    return backends.stream()
        .filter(x -> x.resourceName().equals(resource))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void registersOneResourcePerAcceleratorWithOneDevicePerPort() {
    Registration a = kubelet.awaitRegistration(RES_A, WAIT);
    kubelet.awaitRegistration(RES_B, WAIT);

    assertThat(a.preStartRequired()).as("FpgaBackend is a PreStartHook").isTrue();
    assertThat(a.preferredAllocationAvailable()).isFalse();
    List<DeviceState> devices = kubelet.awaitDevices(RES_A, d -> d.size() == 2, WAIT);
    assertThat(devices)
        .extracting(DeviceState::id, DeviceState::health, DeviceState::numaNodes)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("dfl-port.0", "Healthy", List.of(1L)),
            org.assertj.core.groups.Tuple.tuple("dfl-port.2", "Healthy", List.of(0L)));
    assertThat(kubelet.awaitDevices(RES_B, d -> d.size() == 1, WAIT))
        .extracting(DeviceState::id)
        .containsExactly("dfl-port.1");
    // The listener writes the file just after the core marks the last resource registered.
    org.awaitility.Awaitility.await()
        .atMost(WAIT)
        .untilAsserted(() -> assertThat(run.resolve("ready")).exists());
    assertThat(host.isReady()).isTrue();
  }

  @Test
  void portErrorsTurnTheDeviceUnhealthyAndClearingThemHealthyAgain() {
    kubelet.awaitDevices(
        RES_A, d -> d.size() == 2 && d.stream().allMatch(DeviceState::healthy), WAIT);

    fpga.portErrors(2, "0x4");
    backend(RES_A).rescan();
    kubelet.awaitDevices(RES_A, d -> unhealthy(d).equals(Set.of("dfl-port.2")), WAIT);
    assertThat(kubelet.capacity(RES_A)).isEqualTo(2);
    assertThat(kubelet.allocatable(RES_A)).isEqualTo(1);

    fpga.portErrors(2, "0x0");
    backend(RES_A).rescan();
    kubelet.awaitDevices(RES_A, d -> unhealthy(d).isEmpty(), WAIT);
    assertThat(kubelet.allocatable(RES_A)).isEqualTo(2);
  }

  @Test
  void allocationGivesThePortNodesReadWriteAndTheirNames() {
    kubelet.awaitDevices(RES_A, d -> d.size() == 2, WAIT);

    Allocation a = kubelet.allocate(RES_A, 2);

    assertThat(a.problems()).isEmpty();
    assertThat(a.deviceIds()).containsExactlyInAnyOrder("dfl-port.0", "dfl-port.2");
    assertThat(a.devices())
        .containsExactlyInAnyOrder(
            new DeviceSpec("/dev/dfl-port.0", "/dev/dfl-port.0", "rw"),
            new DeviceSpec("/dev/dfl-port.2", "/dev/dfl-port.2", "rw"));
    assertThat(a.envs()).containsOnlyKeys("DFL_PORTS");
    assertThat(a.envs().get("DFL_PORTS").split(","))
        .containsExactlyInAnyOrder("dfl-port.0", "dfl-port.2");
  }

  @Test
  void preStartRefusesAPortThatWentBadAfterTheLastScan() {
    kubelet.awaitDevices(RES_A, d -> d.size() == 2, WAIT);
    fpga.portErrors(0, "0x4"); // no rescan: the core still believes the port is healthy

    assertThatThrownBy(() -> kubelet.allocate(RES_A, "dfl-port.0"))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.rpc()).isEqualTo("PreStartContainer");
              assertThat(e.description()).contains("dfl-port.0", "0x4");
            });
    assertThat(kubelet.allocate(RES_A, "dfl-port.2").deviceIds()).containsExactly("dfl-port.2");
  }

  @Test
  void reRegistersAfterAKubeletRestart() {
    kubelet.awaitRegistration(RES_A, WAIT);
    kubelet.awaitRegistration(RES_B, WAIT);

    Mark restarted = kubelet.restart();

    Registration again = kubelet.awaitRegistration(RES_A, restarted, WAIT);
    kubelet.awaitRegistration(RES_B, restarted, WAIT);
    assertThat(again.isAfter(restarted)).isTrue();
    // The restarted kubelet knows the devices again once the new ListAndWatch delivered them.
    kubelet.awaitDevices(
        RES_A, d -> d.size() == 2 && d.stream().allMatch(DeviceState::healthy), WAIT);
    kubelet.awaitDevices(RES_B, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
    assertThat(kubelet.allocate(RES_B, 1).deviceIds()).containsExactly("dfl-port.1");
  }

  @Test
  void malformedPortIsDroppedAndThePluginKeepsServing() {
    kubelet.awaitDevices(RES_A, d -> d.size() == 2, WAIT);

    tree.write(fpga.portDir(2).resolve("afu_id"), "garbage\n");
    backend(RES_A).rescan();

    kubelet.awaitDevices(RES_A, d -> d.size() == 1, WAIT);
    assertThat(backend(RES_A).problems()).anySatisfy(p -> assertThat(p).contains("'garbage'"));
    assertThat(kubelet.allocate(RES_A, 1).deviceIds()).containsExactly("dfl-port.0");
  }
}
