package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.podresources.ClaimResource;
import io.github.deviceplugin4j.core.podresources.ContainerResources;
import io.github.deviceplugin4j.core.podresources.DeviceOwner;
import io.github.deviceplugin4j.core.podresources.DynamicResource;
import io.github.deviceplugin4j.core.podresources.PodResources;
import io.github.deviceplugin4j.core.podresources.PodResourcesClient;
import io.github.deviceplugin4j.dra.testkit.DraCluster;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import io.github.deviceplugin4j.dra.testkit.DraTest;
import io.github.deviceplugin4j.testkit.DraResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A pod that still asks for {@code example.com/fpga: 2} (KEP-5004) on a node where a DRA driver
 * built from sdk-dra's public API serves that resource: the test cluster's scheduler makes and
 * allocates the pod's extended-resource claim, the fake kubelet prepares it with the pod like a
 * 1.34+ kubelet, and the SDK's PodResources client maps the devices back to the container.
 */
@DraTest
class ExtendedResourcePodOnKubeletTest {
  private static final String DRIVER = "fpga.example.com";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  DraCluster cluster;

  private final DeviceBackend backend =
      new DeviceBackend() {
        @Override
        public String resourceName() {
          return "example.com/fpga";
        }

        @Override
        public List<Device> devices() {
          return List.of(port(0), port(1), port(2));
        }
      };

  private static Device port(int n) {
    return Device.builder("port" + n).deviceNode(DeviceNode.rw("/dev/port" + n)).build();
  }

  private void serveExtendedResourceThroughAClass() {
    cluster.scheduler().installDeviceClass(DRIVER, "example.com/fpga");
  }

  private void createPod(String name, String container, int fpgas) {
    cluster
        .client()
        .pods()
        .inNamespace("team-a")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("team-a")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName(container)
                .withImage("app")
                .withNewResources()
                .withRequests(Map.of("example.com/fpga", new Quantity(String.valueOf(fpgas))))
                .withLimits(Map.of("example.com/fpga", new Quantity(String.valueOf(fpgas))))
                .endResources()
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  @Test
  void aPodsExtendedResourceClaimIsPreparedAndItsDevicesAreListedForItsContainer()
      throws Exception {
    BackendDriver driver =
        BackendDriver.builder(DRIVER, backend)
            .kubernetesClient(cluster.client())
            .nodeName(cluster.nodeName())
            .cdiDirectory(cluster.cdiDir())
            .build();
    driver.start();
    try (driver;
        DraPluginHost host =
            DraPluginHost.builder(DRIVER, driver)
                .pluginDir(cluster.pluginDir(DRIVER))
                .registryDir(cluster.registryDir())
                .start();
        PodResourcesClient podResources =
            PodResourcesClient.connect(cluster.podResourcesSocket())) {
      cluster.kubelet().dra().awaitRegistration(DRIVER, WAIT);
      cluster.awaitDevices(DRIVER, devices -> devices.size() == 3, WAIT);
      serveExtendedResourceThroughAClass();
      createPod("trainer", "main", 2);

      var scheduled = cluster.scheduler().schedule("team-a", "trainer");
      String claimName =
          scheduled.getStatus().getExtendedResourceClaimStatus().getResourceClaimName();
      ResourceClaim claim =
          cluster
              .client()
              .dynamicResourceAllocation()
              .v1()
              .resourceClaims()
              .inNamespace("team-a")
              .withName(claimName)
              .get();
      assertThat(claim.getMetadata().getAnnotations())
          .containsEntry(DraScheduler.EXTENDED_RESOURCE_CLAIM_ANNOTATION, "true");

      Map<String, DraResult> prepared = cluster.preparePod("team-a", "trainer");

      assertThat(prepared).containsOnlyKeys(DRIVER);
      assertThat(prepared.get(DRIVER).ok()).as("%s", prepared).isTrue();
      assertThat(driver.cdiSpecFile(claim.getMetadata().getUid())).exists();

      PodResources pod = podResources.get("team-a", "trainer").orElseThrow();
      ContainerResources main = pod.containers().get(0);
      assertThat(main.name()).isEqualTo("main");
      DynamicResource dynamic = main.dynamicResources().get(0);
      assertThat(dynamic.claimName()).isEqualTo(claimName);
      assertThat(dynamic.claimNamespace()).isEqualTo("team-a");
      assertThat(dynamic.claimResources())
          .extracting(ClaimResource::driverName, ClaimResource::poolName, ClaimResource::deviceName)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(DRIVER, cluster.nodeName(), "port0"),
              org.assertj.core.groups.Tuple.tuple(DRIVER, cluster.nodeName(), "port1"));
      // Like the kubelet, a device lists the CDI IDs of the driver's devices before it too.
      String uid = claim.getMetadata().getUid();
      assertThat(dynamic.claimResources().get(0).cdiDeviceIds())
          .containsExactly(DRIVER + "/device=" + uid + "-port0");
      assertThat(dynamic.claimResources().get(1).cdiDeviceIds())
          .containsExactly(
              DRIVER + "/device=" + uid + "-port0", DRIVER + "/device=" + uid + "-port1");
      assertThat(podResources.ownersOfDraDevice(DRIVER, cluster.nodeName(), "port1"))
          .containsExactly(new DeviceOwner("team-a", "trainer", "main"));

      // A second pod gets the one port left; a third finds none.
      createPod("second", "main", 1);
      cluster.scheduler().schedule("team-a", "second");
      createPod("third", "main", 1);
      assertThatThrownBy(() -> cluster.scheduler().schedule("team-a", "third"))
          .hasMessageContaining("3 match, 0 free, 3 allocated to another claim");

      Map<String, DraResult> unprepared = cluster.unpreparePod("team-a", "trainer");
      assertThat(unprepared.get(DRIVER).ok()).as("%s", unprepared).isTrue();
      assertThat(driver.cdiSpecFile(uid)).doesNotExist();
      assertThat(podResources.get("team-a", "trainer")).isEmpty();
    }
  }

  @Test
  void aPodWhoseClaimIsNotReservedForItIsRefusedWithTheKubeletsWords() {
    DraScheduler scheduler = cluster.scheduler();
    scheduler.assign(
        "team-a", "borrowed", DraScheduler.device("fpga", DRIVER, cluster.nodeName(), "port0"));
    cluster
        .client()
        .pods()
        .inNamespace("team-a")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("borrower")
                .withNamespace("team-a")
                .endMetadata()
                .withNewSpec()
                .addNewResourceClaim()
                .withName("fpga")
                .withResourceClaimName("borrowed")
                .endResourceClaim()
                .addNewContainer()
                .withName("main")
                .endContainer()
                .endSpec()
                .build())
        .create();

    assertThatThrownBy(() -> cluster.preparePod("team-a", "borrower"))
        .hasMessageContaining("pod borrower (")
        .hasMessageContaining("is not allowed to use ResourceClaim borrowed");
  }
}
