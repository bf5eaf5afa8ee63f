package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourceResponse;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.api.drahealth.v1.DRAResourceHealthGrpc;
import io.github.deviceplugin4j.api.drahealth.v1.DeviceHealth;
import io.github.deviceplugin4j.api.drahealth.v1.HealthStatus;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesResponse;
import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.dra.slices.MockApiServer;
import io.github.deviceplugin4j.dra.slices.ResourceSlicePublisher;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A DRA driver built from a {@link DeviceBackend}, end to end: fabric8's mock API server in CRUD
 * mode plays the API server (the test plays the scheduler by writing claim allocations), and a
 * grpc-java client on the driver's real Unix socket plays the kubelet.
 */
class BackendDriverTest {

  private static final String DRIVER = "fpga.example.com";
  private static final String NODE = "node-1";
  private static final String KIND = DRIVER + "/device";

  @TempDir Path tmp;
  private MockApiServer api;
  private DraScheduler scheduler;
  private final KubeletClient kubelet = new KubeletClient();
  private FpgaBackend backend;
  private DraPluginHost host;

  /** A backend whose device list the test changes through the sink, like a hotplug watcher. */
  static class FpgaBackend implements DeviceBackend {
    final AtomicReference<DeviceSink> sink = new AtomicReference<>();
    volatile List<Device> devices = List.of(port(0, Health.HEALTHY), port(1, Health.HEALTHY));
    volatile RuntimeException failure;

    static Device port(int i, Health health) {
      return Device.builder("port" + i)
          .health(health)
          .numaNode(0)
          .deviceNode(DeviceNode.rw("/dev/dfl-port." + i))
          .env("FPGA_PORT_" + i, String.valueOf(i))
          .cdiDevice("vendor.example.com/firmware=shell")
          .build();
    }

    @Override
    public String resourceName() {
      return "fpga.example.com/port";
    }

    @Override
    public List<Device> devices() {
      RuntimeException f = failure;
      if (f != null) {
        throw f;
      }
      return devices;
    }

    @Override
    public void start(DeviceSink s) {
      sink.set(s);
    }

    void push(List<Device> list) {
      devices = list;
      sink.get().publish(list);
    }
  }

  /** The same backend with an allocator that adds a variable naming the whole set. */
  static final class AllocatingBackend extends FpgaBackend implements Allocator {
    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      return request.defaultAllocation().toBuilder()
          .env("FPGA_PORTS", String.join(",", request.deviceIds()))
          .build();
    }
  }

  @BeforeEach
  void startApi() {
    api = new MockApiServer();
    api.createNode(NODE);
    scheduler = DraScheduler.forNode(api.client, NODE);
    backend = new FpgaBackend();
  }

  @AfterEach
  void stop() {
    kubelet.close();
    if (host != null) {
      host.close();
    }
    api.close();
  }

  private BackendDriver.Builder driver(DeviceBackend b) {
    return BackendDriver.builder(DRIVER, b)
        .kubernetesClient(api.client)
        .nodeName(NODE)
        .cdiDirectory(tmp.resolve("cdi"))
        .sliceOptions(s -> s.coalesceDelay(Duration.ZERO));
  }

  private DraPluginHost start(BackendDriver.Builder b) {
    return b.host().pluginDir(tmp.resolve("p")).registryDir(tmp.resolve("r")).start();
  }

  private List<ResourceSlice> slices() {
    return api.client
        .dynamicResourceAllocation()
        .v1()
        .resourcesSlices()
        .withLabel(ResourceSlicePublisher.DRIVER_LABEL, DRIVER)
        .list()
        .getItems();
  }

  private List<String> publishedDevices() {
    return slices().stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .map(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .sorted()
        .toList();
  }

  private static io.github.deviceplugin4j.api.dra.v1.Claim wire(ResourceClaim c) {
    return io.github.deviceplugin4j.api.dra.v1.Claim.newBuilder()
        .setNamespace(c.getMetadata().getNamespace())
        .setName(c.getMetadata().getName())
        .setUid(c.getMetadata().getUid())
        .build();
  }

  private static String uid(ResourceClaim c) {
    return c.getMetadata().getUid();
  }

  private Path specFile(String claimUid) {
    return tmp.resolve("cdi").resolve(DRIVER + "-device_claim-" + claimUid + ".json");
  }

  @Test
  void theBackendsDevicesArePublishedAsThisNodesPool() {
    host = start(driver(backend));

    await().atMost(Duration.ofSeconds(20)).until(() -> publishedDevices().size() == 2);
    assertThat(publishedDevices()).containsExactly("port0", "port1");
    assertThat(slices())
        .allSatisfy(
            s -> {
              assertThat(s.getSpec().getNodeName()).isEqualTo(NODE);
              assertThat(s.getSpec().getPool().getName()).isEqualTo(NODE);
              assertThat(s.getSpec().getDriver()).isEqualTo(DRIVER);
            });
  }

  @Test
  void aDeviceListChangeIsRepublishedWithANewPoolGeneration() {
    host = start(driver(backend));
    await().atMost(Duration.ofSeconds(20)).until(() -> publishedDevices().size() == 2);
    long generation = slices().get(0).getSpec().getPool().getGeneration();

    backend.push(
        List.of(
            FpgaBackend.port(0, Health.HEALTHY),
            FpgaBackend.port(1, Health.HEALTHY),
            FpgaBackend.port(2, Health.HEALTHY)));

    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> publishedDevices().equals(List.of("port0", "port1", "port2")));
    assertThat(slices().get(0).getSpec().getPool().getGeneration()).isGreaterThan(generation);
  }

  @Test
  void preparingAnAllocatedClaimWritesOneCdiSpecAndReturnsItsIds() throws Exception {
    host = start(driver(backend));
    ResourceClaim claim =
        scheduler.assign(
            "team-a",
            "two-ports",
            DraScheduler.device("fpga", DRIVER, NODE, "port0"),
            DraScheduler.device("fpga", DRIVER, NODE, "port1"));

    NodePrepareResourcesResponse response = kubelet.prepare(host.draSocket(), wire(claim));

    NodePrepareResourceResponse entry = response.getClaimsOrThrow(uid(claim));
    assertThat(entry.getError()).isEmpty();
    assertThat(entry.getDevicesList())
        .satisfiesExactly(
            d -> {
              assertThat(d.getRequestNamesList()).containsExactly("fpga");
              assertThat(d.getPoolName()).isEqualTo(NODE);
              assertThat(d.getDeviceName()).isEqualTo("port0");
              assertThat(d.getCdiDeviceIdsList())
                  .containsExactly(
                      KIND + "=" + uid(claim) + "-port0", "vendor.example.com/firmware=shell");
            },
            d -> {
              assertThat(d.getDeviceName()).isEqualTo("port1");
              assertThat(d.getCdiDeviceIdsList())
                  .containsExactly(
                      KIND + "=" + uid(claim) + "-port1", "vendor.example.com/firmware=shell");
            });
    Path spec = specFile(uid(claim));
    assertThat(spec).exists();
    String json = Files.readString(spec);
    assertThat(json)
        .contains("\"kind\" : \"" + KIND + "\"")
        .contains("\"name\" : \"" + uid(claim) + "-port0\"")
        .contains("\"hostPath\" : \"/dev/dfl-port.0\"")
        .contains("\"hostPath\" : \"/dev/dfl-port.1\"")
        .contains("FPGA_PORT_0=0")
        .contains("FPGA_PORT_1=1");
  }

  @Test
  void unprepareRemovesTheClaimsSpecAndARepeatIsFine() {
    host = start(driver(backend));
    ResourceClaim claim =
        scheduler.assign("team-a", "one", DraScheduler.device("fpga", DRIVER, NODE, "port0"));
    kubelet.prepare(host.draSocket(), wire(claim));
    assertThat(specFile(uid(claim))).exists();

    var first = kubelet.unprepare(host.draSocket(), wire(claim));
    var again = kubelet.unprepare(host.draSocket(), wire(claim));

    assertThat(first.getClaimsOrThrow(uid(claim)).getError()).isEmpty();
    assertThat(again.getClaimsOrThrow(uid(claim)).getError()).isEmpty();
    assertThat(specFile(uid(claim))).doesNotExist();
  }

  @Test
  void aClaimForAnotherPoolDriverOrUidGetsItsOwnErrorAndTheOthersArePrepared() {
    host = start(driver(backend));
    ResourceClaim good =
        scheduler.assign("team-a", "good", DraScheduler.device("fpga", DRIVER, NODE, "port0"));
    ResourceClaim otherPool =
        scheduler.assign("team-a", "elsewhere", DraScheduler.device("fpga", DRIVER, "node-2", "p"));
    ResourceClaim otherDriver =
        scheduler.assign(
            "team-a", "gpu", DraScheduler.device("gpu", "gpu.example.com", NODE, "gpu0"));
    ResourceClaim recreated =
        scheduler.assign("team-a", "recreated", DraScheduler.device("fpga", DRIVER, NODE, "port1"));
    var staleUid = wire(recreated).toBuilder().setUid("0000-old-uid").build();

    NodePrepareResourcesResponse response =
        kubelet.prepare(host.draSocket(), wire(good), wire(otherPool), wire(otherDriver), staleUid);

    assertThat(response.getClaimsOrThrow(uid(good)).getError()).isEmpty();
    assertThat(response.getClaimsOrThrow(uid(otherPool)).getError())
        .contains("pool node-2")
        .contains("this node is " + NODE);
    assertThat(response.getClaimsOrThrow(uid(otherDriver)).getError())
        .contains("gpu.example.com")
        .contains("not to " + DRIVER);
    assertThat(response.getClaimsOrThrow("0000-old-uid").getError()).contains("uid differs");
    assertThat(specFile(uid(otherPool))).doesNotExist();
    assertThat(specFile("0000-old-uid")).doesNotExist();
  }

  @Test
  void anUnhealthyOrUnknownDeviceFailsTheClaimNamingTheDevice() {
    host = start(driver(backend));
    backend.push(
        List.of(FpgaBackend.port(0, Health.UNHEALTHY), FpgaBackend.port(1, Health.HEALTHY)));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                slices().stream()
                    .flatMap(s -> s.getSpec().getDevices().stream())
                    .anyMatch(d -> d.getName().equals("port0") && !d.getTaints().isEmpty()));
    ResourceClaim sick =
        scheduler.assign("team-a", "sick", DraScheduler.device("fpga", DRIVER, NODE, "port0"));
    ResourceClaim gone =
        scheduler.assign("team-a", "gone", DraScheduler.device("fpga", DRIVER, NODE, "port9"));

    NodePrepareResourcesResponse response =
        kubelet.prepare(host.draSocket(), wire(sick), wire(gone));

    assertThat(response.getClaimsOrThrow(uid(sick)).getError())
        .contains("device port0")
        .contains("unhealthy");
    assertThat(response.getClaimsOrThrow(uid(gone)).getError())
        .contains("device port9")
        .contains("not in the backend's current device list");
    assertThat(specFile(uid(sick))).doesNotExist();
  }

  @Test
  void aRestartedHostUnpreparesWhatTheOldOnePrepared() {
    host = start(driver(backend));
    ResourceClaim claim =
        scheduler.assign("team-a", "survivor", DraScheduler.device("fpga", DRIVER, NODE, "port1"));
    assertThat(
            kubelet.prepare(host.draSocket(), wire(claim)).getClaimsOrThrow(uid(claim)).getError())
        .isEmpty();
    host.close();

    host = start(driver(new FpgaBackend()));
    assertThat(host.preparedClaims()).containsKey(uid(claim));
    var response = kubelet.unprepare(host.draSocket(), wire(claim));

    assertThat(response.getClaimsOrThrow(uid(claim)).getError()).isEmpty();
    assertThat(specFile(uid(claim))).doesNotExist();
    assertThat(host.preparedClaims()).isEmpty();
  }

  @Test
  void theHealthStreamFollowsTheBackend() {
    host = start(driver(backend));
    Iterator<NodeWatchResourcesResponse> stream =
        DRAResourceHealthGrpc.newBlockingStub(kubelet.channel(host.draSocket()))
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance());

    assertThat(healthOf(next(stream, HealthStatus.HEALTHY))).containsEntry("port0", "HEALTHY");
    backend.push(
        List.of(FpgaBackend.port(0, Health.UNHEALTHY), FpgaBackend.port(1, Health.HEALTHY)));
    assertThat(healthOf(next(stream, HealthStatus.UNHEALTHY)))
        .containsEntry("port0", "UNHEALTHY")
        .containsEntry("port1", "HEALTHY");
    backend.failure = new IllegalStateException("sysfs is gone");
    backend.sink.get().rescan();
    NodeWatchResourcesResponse unknown = next(stream, HealthStatus.UNKNOWN);
    assertThat(healthOf(unknown))
        .containsEntry("port0", "UNKNOWN")
        .containsEntry("port1", "UNKNOWN");
    assertThat(unknown.getDevices(0).getMessage()).contains("sysfs is gone");
  }

  /** The next list on the stream that has a device with the given health. */
  private static NodeWatchResourcesResponse next(
      Iterator<NodeWatchResourcesResponse> stream, HealthStatus wanted) {
    while (true) {
      NodeWatchResourcesResponse r = stream.next();
      if (r.getDevicesList().stream().anyMatch(d -> d.getHealth() == wanted)) {
        return r;
      }
    }
  }

  private static Map<String, String> healthOf(NodeWatchResourcesResponse r) {
    return r.getDevicesList().stream()
        .collect(
            java.util.stream.Collectors.toMap(
                d -> d.getDevice().getDeviceName(), (DeviceHealth d) -> d.getHealth().name()));
  }

  @Test
  void anAllocatorsAnswerBecomesOneCdiDevicePerRequest() throws Exception {
    host = start(driver(new AllocatingBackend()));
    ResourceClaim claim =
        scheduler.assign(
            "team-a",
            "pair",
            DraScheduler.device("fpga", DRIVER, NODE, "port0"),
            DraScheduler.device("fpga", DRIVER, NODE, "port1"));

    NodePrepareResourceResponse entry =
        kubelet.prepare(host.draSocket(), wire(claim)).getClaimsOrThrow(uid(claim));

    assertThat(entry.getError()).isEmpty();
    assertThat(entry.getDevices(0).getCdiDeviceIdsList())
        .containsExactly(KIND + "=" + uid(claim) + "_fpga", "vendor.example.com/firmware=shell");
    assertThat(entry.getDevices(1).getCdiDeviceIdsList()).isEmpty();
    assertThat(Files.readString(specFile(uid(claim))))
        .contains("FPGA_PORTS=port0,port1")
        .contains("/dev/dfl-port.0")
        .contains("/dev/dfl-port.1");
  }

  @Test
  void slicesStayOnShutdownUnlessRemovalIsOptedIn() {
    host = start(driver(backend));
    await().atMost(Duration.ofSeconds(20)).until(() -> publishedDevices().size() == 2);
    host.close();
    assertThat(publishedDevices()).hasSize(2);

    host = start(driver(backend).removeSlicesOnShutdown(true));
    host.close();

    assertThat(slices()).isEmpty();
  }

  @Test
  void withoutANodeNameTheBuilderSaysWhereToGetIt() {
    assertThatThrownBy(
            () ->
                BackendDriver.builder(DRIVER, backend)
                    .kubernetesClient(api.client)
                    .environment(name -> null)
                    .build())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("NODE_NAME")
        .hasMessageContaining("spec.nodeName");
  }
}
