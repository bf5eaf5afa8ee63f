package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.podresources.ContainerDevices;
import io.github.deviceplugin4j.core.podresources.PodResourcesClient;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.PodRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Device sharing ({@link Sharing}) through the fake kubelet, over real Unix sockets. */
class SharingEndToEndTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/serial";

  @TempDir Path dir;

  /** Two serial ports, recording what its allocator and pre-start hook see. */
  static final class PortBackend extends TestBackend implements Allocator, PreStartHook {
    final List<List<String>> allocated = new CopyOnWriteArrayList<>();
    final List<List<String>> preStarted = new CopyOnWriteArrayList<>();

    PortBackend() {
      super(RESOURCE, List.of(port("ttyUSB0"), port("ttyUSB1")));
    }

    static Device port(String name) {
      return Device.builder(name)
          .deviceNode(DeviceNode.rw("/dev/" + name))
          .env("PORT", name)
          .build();
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      allocated.add(request.deviceIds());
      return request.defaultAllocation();
    }

    @Override
    public void preStart(List<Device> devices) {
      preStarted.add(devices.stream().map(Device::id).toList());
    }
  }

  private DevicePluginHost host(Path pluginDir, DeviceBackend backend, Sharing sharing) {
    return DevicePluginHost.builder()
        .pluginDir(pluginDir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(backend, sharing)
        .start();
  }

  private static Set<String> ids(List<DeviceState> devices) {
    return devices.stream().map(DeviceState::id).collect(Collectors.toSet());
  }

  private static Set<String> physical(Allocation a) {
    return a.deviceIds().stream().map(Sharing::deviceId).collect(Collectors.toSet());
  }

  @Test
  void eachDeviceIsAdvertisedAsItsReplicasWithStableIdsAcrossAKubeletRestart() {
    TestBackend backend = TestBackend.of(RESOURCE, "ttyUSB0", "ttyUSB1");
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(dir, backend, Sharing.replicas(3))) {
      Set<String> expected =
          Set.of(
              "ttyUSB0::0", "ttyUSB0::1", "ttyUSB0::2", "ttyUSB1::0", "ttyUSB1::1", "ttyUSB1::2");
      assertThat(ids(kubelet.awaitDevices(RESOURCE, d -> d.size() == 6, WAIT))).isEqualTo(expected);
      assertThat(kubelet.awaitRegistration(RESOURCE, WAIT).preferredAllocationAvailable())
          .as("a shared resource offers a preferred allocation")
          .isTrue();

      Mark restarted = kubelet.restart();
      kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
      assertThat(ids(kubelet.awaitDevices(RESOURCE, d -> d.size() == 6, WAIT))).isEqualTo(expected);
    }
  }

  @Test
  void twoReplicasOfOneDeviceGiveItsDeviceNodeOnceAndTheBackendSeesTheDeviceOnce() {
    PortBackend backend = new PortBackend();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(dir, backend, Sharing.replicas(2))) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);

      Allocation a = kubelet.allocate(RESOURCE, "ttyUSB1::0", "ttyUSB1::1");

      assertThat(a.problems()).isEmpty();
      assertThat(a.devices()).containsExactly(new DeviceSpec("/dev/ttyUSB1", "/dev/ttyUSB1", "rw"));
      assertThat(a.envs()).containsEntry("PORT", "ttyUSB1");
      assertThat(backend.allocated).containsExactly(List.of("ttyUSB1"));
      assertThat(backend.preStarted).containsExactly(List.of("ttyUSB1"));

      Allocation both = kubelet.allocate(RESOURCE, "ttyUSB0::1", "ttyUSB1::1");
      assertThat(both.devices())
          .containsExactlyInAnyOrder(
              new DeviceSpec("/dev/ttyUSB0", "/dev/ttyUSB0", "rw"),
              new DeviceSpec("/dev/ttyUSB1", "/dev/ttyUSB1", "rw"));
      assertThat(backend.allocated.get(1)).containsExactly("ttyUSB0", "ttyUSB1");
    }
  }

  @Test
  void aDevicesHealthAppliesToEveryReplica() {
    TestBackend backend = TestBackend.of(RESOURCE, "ttyUSB0", "ttyUSB1");
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(dir, backend, Sharing.replicas(2))) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);

      backend.publish(
          List.of(
              Device.healthy("ttyUSB0"),
              Device.healthy("ttyUSB1").withHealth(Health.UNHEALTHY, "unplugged")));

      List<DeviceState> devices =
          kubelet.awaitDevices(
              RESOURCE, d -> d.stream().filter(s -> !s.healthy()).count() == 2, WAIT);
      assertThat(devices.stream().filter(s -> !s.healthy()).map(DeviceState::id))
          .containsExactlyInAnyOrder("ttyUSB1::0", "ttyUSB1::1");
      assertThat(kubelet.allocatable(RESOURCE)).isEqualTo(2);
      assertThatThrownBy(() -> kubelet.allocate(RESOURCE, "ttyUSB1::0"))
          .isInstanceOf(AllocationException.class);
    }
  }

  @Test
  void preferredAllocationSpreadsReplicasOverDevicesByDefault() {
    TestBackend backend = TestBackend.of(RESOURCE, "ttyUSB0", "ttyUSB1");
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(dir, backend, Sharing.replicas(2))) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);

      Allocation a = kubelet.allocate(RESOURCE, 2);

      assertThat(physical(a)).containsExactlyInAnyOrder("ttyUSB0", "ttyUSB1");
      assertThat(kubelet.events())
          .anySatisfy(
              e -> assertThat(e.kind()).isEqualTo(KubeletEvent.Kind.GET_PREFERRED_ALLOCATION));
    }
  }

  @Test
  void packedSharingFillsOneDeviceBeforeTheNext() {
    TestBackend backend = TestBackend.of(RESOURCE, "ttyUSB0", "ttyUSB1");
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(dir, backend, Sharing.replicas(2).packed())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);

      Allocation a = kubelet.allocate(RESOURCE, 2);

      assertThat(physical(a)).hasSize(1);
      // One replica left on each device: the next pod's single replica goes to a used device.
      Allocation b = kubelet.allocate(RESOURCE, 1);
      Allocation c = kubelet.allocate(RESOURCE, 1);
      assertThat(physical(b)).isEqualTo(physical(c)).doesNotContainAnyElementsOf(physical(a));
    }
  }

  @Test
  void renamedSharingAdvertisesTheSharedNameAndKeepsTheBackendsCapabilities() {
    PortBackend backend = new PortBackend();
    String shared = RESOURCE + ".shared";
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(dir, backend, Sharing.replicas(2).renamed())) {
      assertThat(kubelet.awaitRegistration(shared, WAIT).preStartRequired()).isTrue();
      kubelet.awaitDevices(shared, d -> d.size() == 4, WAIT);
      assertThat(kubelet.registrations())
          .extracting(r -> r.resourceName())
          .doesNotContain(RESOURCE);

      kubelet.allocate(shared, "ttyUSB0::1");

      assertThat(backend.allocated).containsExactly(List.of("ttyUSB0"));
      assertThat(host.status(shared).resourceName()).isEqualTo(shared);
    }
  }

  @Test
  void oneReplicaPerContainerRefusesTwoReplicasAndNamesTheOption() {
    TestBackend backend = TestBackend.of(RESOURCE, "ttyUSB0", "ttyUSB1");
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(dir, backend, Sharing.replicas(2).oneReplicaPerContainer())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);

      assertThatThrownBy(() -> kubelet.allocate(RESOURCE, "ttyUSB0::0", "ttyUSB1::0"))
          .isInstanceOf(AllocationException.class)
          .hasMessageContaining("at most one replica")
          .hasMessageContaining("oneReplicaPerContainer");

      assertThat(kubelet.allocate(RESOURCE, 1).deviceIds()).hasSize(1);
    }
  }

  @Test
  void podResourcesShowsTheReplicaIdsTheKubeletAllocated() {
    Path podResources = dir.resolve("pr.sock");
    Path pluginDir = dir.resolve("dp");
    TestBackend backend = TestBackend.of(RESOURCE, "ttyUSB0");
    try (FakeKubelet kubelet =
            FakeKubelet.builder().pluginDir(pluginDir).podResourcesSocket(podResources).start();
        DevicePluginHost host = host(pluginDir, backend, Sharing.replicas(2));
        PodResourcesClient client = PodResourcesClient.connect(podResources)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      kubelet.allocate(PodRequest.devices(RESOURCE, "ttyUSB0::1").withPod("ns", "a", "uid-a"));
      kubelet.allocate(PodRequest.devices(RESOURCE, "ttyUSB0::0").withPod("ns", "b", "uid-b"));

      assertThat(client.list())
          .flatExtracting(p -> p.containers())
          .flatExtracting(c -> c.devices())
          .flatExtracting(ContainerDevices::deviceIds)
          .containsExactlyInAnyOrder("ttyUSB0::0", "ttyUSB0::1");
      assertThat(client.ownerOf(RESOURCE, "ttyUSB0::1")).isPresent();
    }
  }
}
