package io.github.deviceplugin4j.core.podresources;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.PodRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PodResourcesClientTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir Path tmp;

  private static DeviceBackend backend(String resource, int numa, String... ids) {
    return new DeviceBackend() {
      @Override
      public String resourceName() {
        return resource;
      }

      @Override
      public List<Device> devices() {
        return java.util.Arrays.stream(ids)
            .map(id -> Device.builder(id).numaNode(numa).build())
            .toList();
      }
    };
  }

  @Test
  void findsPodsAllocatableDevicesAndTheOwnerOfADevice() {
    Path podResources = tmp.resolve("pr.sock");
    try (FakeKubelet kubelet =
            FakeKubelet.builder()
                .pluginDir(tmp.resolve("dp"))
                .podResourcesSocket(podResources)
                .start();
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(tmp.resolve("dp"))
                .registrationMode(RegistrationMode.LEGACY)
                .backend(backend("example.com/fpga", 1, "port0", "port1", "port2"))
                .start();
        PodResourcesClient client = PodResourcesClient.connect(podResources)) {
      kubelet.awaitDevices("example.com/fpga", d -> d.size() == 3, WAIT);
      kubelet.allocate(
          PodRequest.devices("example.com/fpga", "port1")
              .withPod("team-a", "trainer", "uid-1")
              .withContainer("worker"));

      List<PodResources> pods = client.list();
      assertThat(pods).hasSize(1);
      PodResources pod = pods.get(0);
      assertThat(pod.namespace()).isEqualTo("team-a");
      assertThat(pod.name()).isEqualTo("trainer");
      assertThat(pod.containers()).hasSize(1);
      ContainerResources c = pod.containers().get(0);
      assertThat(c.name()).isEqualTo("worker");
      assertThat(c.devices())
          .containsExactly(new ContainerDevices("example.com/fpga", List.of("port1"), List.of(1L)));

      assertThat(client.ownerOf("example.com/fpga", "port1"))
          .contains(new DeviceOwner("team-a", "trainer", "worker"));
      assertThat(client.ownerOf("example.com/fpga", "port0")).isEmpty();
      assertThat(client.ownerOf("example.com/other", "port1")).isEmpty();

      assertThat(client.get("team-a", "trainer")).contains(pod);
      assertThat(client.get("team-a", "nobody")).isEmpty();

      assertThat(client.allocatable())
          .flatExtracting(ContainerDevices::deviceIds)
          .contains("port0", "port1", "port2");
      assertThat(host.isReady()).isTrue();
    }
  }

  @Test
  void anAbsentSocketIsAClearError() {
    Path missing = tmp.resolve("missing.sock");
    try (PodResourcesClient client = PodResourcesClient.connect(missing, Duration.ofSeconds(2))) {
      assertThatThrownBy(client::list)
          .isInstanceOfSatisfying(
              PodResourcesException.class,
              e -> {
                assertThat(e.code()).isEqualTo("UNAVAILABLE");
                assertThat(e.getMessage())
                    .contains("PodResources List on " + missing)
                    .contains("the socket does not exist");
              });
    }
  }
}
