package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.github.deviceplugin4j.dra.slices.MockApiServer;
import io.github.deviceplugin4j.dra.slices.ResourceSlicePublisher;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@link BackendDriver} end to end with both fakes: fabric8's mock API server (CRUD) holds the
 * slices and the claim the test allocates like the scheduler, and the testkit's fake kubelet
 * registers the driver and prepares and unprepares the claim for a pod.
 */
class BackendDriverOnFakeKubeletTest {

  private static final String DRIVER = "fpga.example.com";
  private static final String NODE = "node-1";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;
  private MockApiServer api;
  private FakeKubelet kubelet;
  private DraScheduler scheduler;

  @BeforeEach
  void start() {
    api = new MockApiServer();
    api.createNode(NODE);
    scheduler = DraScheduler.forNode(api.client, NODE);
    kubelet =
        FakeKubelet.builder().pluginDir(tmp.resolve("k")).registryDir(tmp.resolve("r")).start();
  }

  @AfterEach
  void stop() {
    kubelet.close();
    api.close();
  }

  private List<String> publishedDevices() {
    return api
        .client
        .dynamicResourceAllocation()
        .v1()
        .resourcesSlices()
        .withLabel(ResourceSlicePublisher.DRIVER_LABEL, DRIVER)
        .list()
        .getItems()
        .stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .map(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .sorted()
        .toList();
  }

  @Test
  void slicesPublishedThenAnAllocatedClaimIsPreparedIntoACdiSpecAndUnprepared() throws Exception {
    BackendDriverTest.FpgaBackend backend = new BackendDriverTest.FpgaBackend();
    BackendDriver.Builder builder =
        BackendDriver.builder(DRIVER, backend)
            .kubernetesClient(api.client)
            .nodeName(NODE)
            .cdiDirectory(tmp.resolve("cdi"))
            .sliceOptions(s -> s.coalesceDelay(Duration.ZERO));
    try (DraPluginHost host =
        builder.host().pluginDir(tmp.resolve("p")).registryDir(tmp.resolve("r")).start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      await().atMost(WAIT).until(() -> publishedDevices().equals(List.of("port0", "port1")));

      ResourceClaim claim =
          scheduler.assign(
              "team-a", "one-port", DraScheduler.device("fpga", DRIVER, NODE, "port1"));
      String uid = claim.getMetadata().getUid();
      DraResult prepared =
          kubelet
              .dra()
              .prepareResources("pod-1", DRIVER, List.of(new DraClaim("team-a", uid, "one-port")));

      assertThat(prepared.ok()).as("%s", prepared).isTrue();
      assertThat(prepared.claim(uid).devices())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.poolName()).isEqualTo(NODE);
                assertThat(d.deviceName()).isEqualTo("port1");
                assertThat(d.requestNames()).containsExactly("fpga");
                assertThat(d.cdiDeviceIds())
                    .containsExactly(
                        DRIVER + "/device=" + uid + "-port1", "vendor.example.com/firmware=shell");
              });
      Path spec = tmp.resolve("cdi").resolve(DRIVER + "-device_claim-" + uid + ".json");
      assertThat(Files.readString(spec)).contains("/dev/dfl-port.1").contains("FPGA_PORT_1=1");

      DraResult unprepared = kubelet.dra().unprepareResources("pod-1", DRIVER);

      assertThat(unprepared.ok()).as("%s", unprepared).isTrue();
      assertThat(unprepared.claims()).containsOnlyKeys(uid);
      assertThat(spec).doesNotExist();
      assertThat(kubelet.dra().preparedClaims()).isEmpty();
    }
  }

  @Test
  void aClaimAllocatedOnAnotherNodeFailsWithTheDriversErrorThroughTheKubelet() {
    BackendDriverTest.FpgaBackend backend = new BackendDriverTest.FpgaBackend();
    BackendDriver.Builder builder =
        BackendDriver.builder(DRIVER, backend)
            .kubernetesClient(api.client)
            .nodeName("node-2")
            .cdiDirectory(tmp.resolve("cdi"))
            .sliceOptions(s -> s.coalesceDelay(Duration.ZERO));
    api.createNode("node-2");
    try (DraPluginHost host =
        builder.host().pluginDir(tmp.resolve("p")).registryDir(tmp.resolve("r")).start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      ResourceClaim claim =
          scheduler.assign(
              "team-a", "elsewhere", DraScheduler.device("fpga", DRIVER, NODE, "port0"));
      String uid = claim.getMetadata().getUid();

      DraResult result =
          kubelet
              .dra()
              .prepareResources("pod-1", DRIVER, List.of(new DraClaim("team-a", uid, "elsewhere")));

      assertThat(result.ok()).isFalse();
      assertThat(result.claim(uid).error())
          .contains("pool " + NODE)
          .contains("this node is node-2");
      assertThat(result.kubeletError())
          .hasValueSatisfying(e -> assertThat(e).contains("elsewhere"));
    }
  }
}
