package io.github.deviceplugin4j.examples.infiniband;

import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.WAIT;
import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.unhealthy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.fixtures.InfinibandFixture;
import io.github.deviceplugin4j.examples.testing.PluginUnderTest;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.PodRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The RDMA plugin in both modes against the fake kubelet, over real Unix sockets. */
class InfinibandPluginTest {
  static final String EXCLUSIVE = "rdma.example.com/hca";
  static final String SHARED = "rdma.example.com/hca_shared";

  @TempDir Path root;
  @TempDir Path run;
  IbTrees t;
  PluginUnderTest plugin;
  FakeKubelet kubelet;
  InfinibandBackend exclusive;
  InfinibandBackend shared;

  @BeforeEach
  void start() {
    t = new IbTrees(root);
    // Long poll intervals: the tests trigger every rescan themselves.
    Duration hour = Duration.ofHours(1);
    exclusive = new InfinibandBackend(InfinibandConfig.exclusive(root).withPollInterval(hour));
    shared =
        new InfinibandBackend(
            InfinibandConfig.shared(root, 3)
                .withPollInterval(hour)
                .withHcas(List.of("mlx5_0", "mlx5_2")));
    plugin =
        PluginUnderTest.start(
            run, b -> b.backend(exclusive, exclusive.sharing()).backend(shared, shared.sharing()));
    kubelet = plugin.kubelet();
  }

  @AfterEach
  void stop() {
    if (plugin != null) {
      plugin.close();
    }
  }

  @Test
  void exclusiveModeHasOneDevicePerHcaWithItsNumaNode() {
    assertThat(kubelet.awaitRegistration(EXCLUSIVE, WAIT).preferredAllocationAvailable()).isTrue();

    List<DeviceState> devices = kubelet.awaitDevices(EXCLUSIVE, d -> d.size() == 4, WAIT);

    assertThat(devices)
        .extracting(DeviceState::id, DeviceState::numaNodes)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("mlx5_0", List.of(0L)),
            org.assertj.core.groups.Tuple.tuple("mlx5_1", List.of(0L)),
            org.assertj.core.groups.Tuple.tuple("mlx5_2", List.of(1L)),
            org.assertj.core.groups.Tuple.tuple("mlx5_3", List.of(1L)));
  }

  @Test
  void sharedModeHasSlotsPerHcaAsCoreReplicas() {
    List<DeviceState> devices = kubelet.awaitDevices(SHARED, d -> d.size() == 6, WAIT);

    assertThat(devices)
        .extracting(DeviceState::id)
        .containsExactlyInAnyOrder(
            "mlx5_0::0", "mlx5_0::1", "mlx5_0::2", "mlx5_2::0", "mlx5_2::1", "mlx5_2::2");
  }

  @Test
  void allocationGivesVerbsMadAndRdmaCmNodes() {
    kubelet.awaitDevices(EXCLUSIVE, d -> d.size() == 4, WAIT);

    Allocation a = kubelet.allocate(EXCLUSIVE, "mlx5_1");

    assertThat(a.problems()).isEmpty();
    assertThat(a.devices())
        .containsExactlyInAnyOrder(
            new DeviceSpec("/dev/infiniband/uverbs1", "/dev/infiniband/uverbs1", "rw"),
            new DeviceSpec("/dev/infiniband/umad1", "/dev/infiniband/umad1", "rw"),
            new DeviceSpec("/dev/infiniband/umad2", "/dev/infiniband/umad2", "rw"),
            new DeviceSpec("/dev/infiniband/rdma_cm", "/dev/infiniband/rdma_cm", "rw"));
    assertThat(a.envs()).containsEntry("RDMA_DEVICES", "mlx5_1");
  }

  @Test
  void preferredAllocationKeepsAContainersHcasOnOneNumaNode() {
    kubelet.awaitDevices(EXCLUSIVE, d -> d.size() == 4, WAIT);

    // mlx5_2 (NUMA 1) must be included: the plugin should add mlx5_3, its NUMA neighbour,
    // rather than one of the NUMA 0 HCAs the kubelet lists first.
    Allocation a = kubelet.allocate(PodRequest.count(EXCLUSIVE, 2).withMustInclude("mlx5_2"));

    assertThat(a.deviceIds()).containsExactlyInAnyOrder("mlx5_2", "mlx5_3");
    assertThat(kubelet.events())
        .anySatisfy(
            e -> assertThat(e.kind()).isEqualTo(KubeletEvent.Kind.GET_PREFERRED_ALLOCATION));
  }

  @Test
  void portDownTurnsTheHcaUnhealthyAndActiveHealthyAgain() {
    kubelet.awaitDevices(
        SHARED, d -> d.size() == 6 && d.stream().allMatch(DeviceState::healthy), WAIT);

    t.ib.portState("mlx5_2", 1, InfinibandFixture.DOWN);
    shared.rescan();
    exclusive.rescan();

    kubelet.awaitDevices(
        SHARED, d -> unhealthy(d).equals(Set.of("mlx5_2::0", "mlx5_2::1", "mlx5_2::2")), WAIT);
    kubelet.awaitDevices(EXCLUSIVE, d -> unhealthy(d).equals(Set.of("mlx5_2")), WAIT);
    assertThat(kubelet.allocatable(SHARED)).isEqualTo(3);

    t.ib.portState("mlx5_2", 1, InfinibandFixture.ACTIVE);
    shared.rescan();
    kubelet.awaitDevices(SHARED, d -> unhealthy(d).isEmpty(), WAIT);
  }

  @Test
  void twoSlotsOfOneHcaGiveItsNodesOnce() {
    kubelet.awaitDevices(SHARED, d -> d.size() == 6, WAIT);

    Allocation a = kubelet.allocate(SHARED, "mlx5_2::0", "mlx5_2::1");

    assertThat(a.problems()).isEmpty();
    assertThat(a.devices())
        .extracting(DeviceSpec::containerPath)
        .doesNotHaveDuplicates()
        .contains("/dev/infiniband/rdma_cm");
    assertThat(a.envs()).containsEntry("RDMA_DEVICES", "mlx5_2");
  }

  @Test
  void reRegistersAfterAKubeletRestart() {
    kubelet.awaitRegistration(EXCLUSIVE, WAIT);
    kubelet.awaitRegistration(SHARED, WAIT);

    Mark restarted = kubelet.restart();

    kubelet.awaitRegistration(EXCLUSIVE, restarted, WAIT);
    kubelet.awaitRegistration(SHARED, restarted, WAIT);
    // The restarted kubelet knows the devices again once the new ListAndWatch delivered them.
    kubelet.awaitDevices(SHARED, d -> d.size() == 6 && unhealthy(d).isEmpty(), WAIT);
    kubelet.awaitDevices(EXCLUSIVE, d -> d.size() == 4 && unhealthy(d).isEmpty(), WAIT);
    assertThat(kubelet.allocate(SHARED, 1).devices()).isNotEmpty();
  }

  @Test
  void malformedTreeMakesTheHcaUnhealthyWithoutStoppingThePlugin() throws Exception {
    kubelet.awaitDevices(EXCLUSIVE, d -> d.size() == 4, WAIT);

    t.ib.portState("mlx5_0", 1, "\u0000\u0000");
    Files.delete(root.resolve("dev/infiniband/uverbs3"));
    exclusive.rescan();

    kubelet.awaitDevices(EXCLUSIVE, d -> unhealthy(d).equals(Set.of("mlx5_0", "mlx5_3")), WAIT);
    assertThat(exclusive.problems()).hasSize(2);
    assertThat(kubelet.allocate(EXCLUSIVE, "mlx5_1").deviceIds()).containsExactly("mlx5_1");
  }
}
