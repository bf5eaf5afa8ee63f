package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.dra.slices.MockApiServer;
import io.github.deviceplugin4j.dra.slices.ResourceSlicePublisher;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * BackendDriver with what a Kubernetes 1.37 cluster turns on: device taints, partitionable devices,
 * consumable capacity, admin access, device status and binding conditions. The test plays the
 * scheduler by writing each claim's allocation itself; the kubelet is a real gRPC client on the
 * driver's Unix socket.
 */
class BackendDriverKubernetes137Test {
  private static final String DRIVER = "fpga.example.com";
  private static final String NODE = "node-1";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;
  private MockApiServer api;
  private final KubeletClient kubelet = new KubeletClient();
  private Backend backend;
  private DraPluginHost host;
  private BackendDriver driver;

  /** Two ports; optional capabilities switched on by subclasses. */
  static class Backend implements DeviceBackend {
    final AtomicReference<DeviceSink> sink = new AtomicReference<>();
    volatile List<Device> devices =
        List.of(port(0, Health.HEALTHY, ""), port(1, Health.HEALTHY, ""));

    static Device port(int i, Health health, String reason) {
      return Device.builder("port" + i)
          .health(health, reason)
          .deviceNode(DeviceNode.rw("/dev/dfl-port." + i))
          .build();
    }

    @Override
    public String resourceName() {
      return "fpga.example.com/port";
    }

    @Override
    public List<Device> devices() {
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

  /** Shares each port among claims, and records what prepare handed it. */
  static final class SharingBackend extends Backend implements ClaimAllocator {
    final List<ClaimAllocator.Share> seen = new CopyOnWriteArrayList<>();

    @Override
    public ContainerAllocation allocate(Request request) {
      seen.addAll(request.devices());
      var b = ContainerAllocation.builder();
      for (Share s : request.devices()) {
        b.env(
            "SHARE_" + s.deviceName().toUpperCase(java.util.Locale.ROOT),
            s.shareId().orElse("whole") + ":" + s.consumedCapacity().getOrDefault("bandwidth", ""));
      }
      return b.build();
    }
  }

  /** Reports a network interface and MAC for each port. */
  static final class NicBackend extends Backend implements DeviceStatusReporter {
    @Override
    public DeviceStatus deviceStatus(Device device) {
      String n = device.id().substring(4);
      return DeviceStatus.network(
          "net" + n, "02:00:00:00:00:0" + n, List.of("10.0.0." + n + "/24"));
    }
  }

  /** One card with both ports as partitions of it. */
  static final class CardBackend extends Backend implements DevicePartitions {
    CardBackend() {
      devices =
          List.of(
              Device.builder("card0").deviceNode(DeviceNode.rw("/dev/card0")).build(),
              port(0, Health.HEALTHY, ""),
              port(1, Health.HEALTHY, ""));
    }

    @Override
    public Partitions partitions(List<Device> list) {
      return new Partitions(
          List.of(new CounterSet("card0", Map.of("ports", "2"))),
          Map.of(
              "card0", List.of(new Consumption("card0", Map.of("ports", "2"))),
              "port0", List.of(new Consumption("card0", Map.of("ports", "1"))),
              "port1", List.of(new Consumption("card0", Map.of("ports", "1")))));
    }
  }

  @BeforeEach
  void startApi() {
    api = new MockApiServer();
    api.createNode(NODE);
    backend = new Backend();
  }

  @AfterEach
  void stop() {
    api.down.set(false);
    kubelet.close();
    if (host != null) {
      host.close();
    }
    api.close();
  }

  private BackendDriver.Builder builder(DeviceBackend b) {
    return BackendDriver.builder(DRIVER, b)
        .kubernetesClient(api.client)
        .nodeName(NODE)
        .cdiDirectory(tmp.resolve("cdi"))
        .sliceOptions(
            s ->
                s.coalesceDelay(Duration.ZERO)
                    .backoff(Duration.ofMillis(20), Duration.ofMillis(500)))
        .statusOptions(s -> s.backoff(Duration.ofMillis(20), Duration.ofMillis(500)));
  }

  private void start(BackendDriver.Builder b) {
    driver = b.build();
    driver.start();
    host =
        DraPluginHost.builder(DRIVER, driver)
            .owning(() -> {}, driver)
            .pluginDir(tmp.resolve("p"))
            .registryDir(tmp.resolve("r"))
            .start();
  }

  private List<io.fabric8.kubernetes.api.model.resource.v1.Device> published() {
    List<io.fabric8.kubernetes.api.model.resource.v1.Device> out = new ArrayList<>();
    for (ResourceSlice s :
        api.client
            .dynamicResourceAllocation()
            .v1()
            .resourcesSlices()
            .withLabel(ResourceSlicePublisher.DRIVER_LABEL, DRIVER)
            .list()
            .getItems()) {
      out.addAll(s.getSpec().getDevices());
    }
    out.sort(
        java.util.Comparator.comparing(
            io.fabric8.kubernetes.api.model.resource.v1.Device::getName));
    return out;
  }

  private Optional<io.fabric8.kubernetes.api.model.resource.v1.Device> device(String name) {
    return published().stream().filter(d -> d.getName().equals(name)).findFirst();
  }

  private List<DeviceTaint> taints(String name) {
    return device(name)
        .map(io.fabric8.kubernetes.api.model.resource.v1.Device::getTaints)
        .orElse(List.of());
  }

  private static DeviceRequestAllocationResult result(String request, String device) {
    return DraScheduler.device(request, DRIVER, NODE, device);
  }

  private ResourceClaim allocatedClaim(String name, DeviceRequestAllocationResult... results) {
    return DraScheduler.forNode(api.client, NODE).assign("team-a", name, results);
  }

  private ResourceClaim read(ResourceClaim c) {
    return api.client
        .dynamicResourceAllocation()
        .v1()
        .resourceClaims()
        .inNamespace("team-a")
        .withName(c.getMetadata().getName())
        .get();
  }

  private static io.github.deviceplugin4j.api.dra.v1.Claim wire(ResourceClaim c) {
    return io.github.deviceplugin4j.api.dra.v1.Claim.newBuilder()
        .setNamespace(c.getMetadata().getNamespace())
        .setName(c.getMetadata().getName())
        .setUid(c.getMetadata().getUid())
        .build();
  }

  private static Claim claim(ResourceClaim c) {
    return new Claim("team-a", c.getMetadata().getUid(), c.getMetadata().getName());
  }

  private String prepareError(ResourceClaim c) {
    NodePrepareResourcesResponse r = kubelet.prepare(host.draSocket(), wire(c));
    return r.getClaimsOrThrow(c.getMetadata().getUid()).getError();
  }

  @Test
  void anUnhealthyDeviceStaysInTheSliceWithANoScheduleTaint_andRecoveryRemovesIt() {
    start(builder(backend));
    await().atMost(WAIT).until(() -> published().size() == 2);

    backend.push(
        List.of(
            Backend.port(0, Health.UNHEALTHY, "fan failed: 9000 rpm"),
            Backend.port(1, Health.HEALTHY, "")));

    await().atMost(WAIT).until(() -> !taints("port0").isEmpty());
    assertThat(taints("port0"))
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.getKey()).isEqualTo(DRIVER + "/unhealthy");
              assertThat(t.getValue()).isEqualTo("fan-failed-9000-rpm");
              assertThat(t.getEffect()).isEqualTo("NoSchedule");
            });
    assertThat(taints("port1")).isEmpty();

    backend.push(List.of(Backend.port(0, Health.HEALTHY, ""), Backend.port(1, Health.HEALTHY, "")));

    await().atMost(WAIT).until(() -> device("port0").isPresent() && taints("port0").isEmpty());
  }

  @Test
  void aVendorCanOptIntoNoExecute() {
    backend.devices =
        List.of(Backend.port(0, Health.UNHEALTHY, "ecc"), Backend.port(1, Health.HEALTHY, ""));
    start(builder(backend).healthTaintEffect(BackendDevices.TaintEffect.NO_EXECUTE));

    await().atMost(WAIT).until(() -> !taints("port0").isEmpty());
    assertThat(taints("port0")).extracting(DeviceTaint::getEffect).containsExactly("NoExecute");
  }

  @Test
  void withHealthTaintsOff_anUnhealthyDeviceIsLeftOut() {
    backend.devices =
        List.of(Backend.port(0, Health.UNHEALTHY, "ecc"), Backend.port(1, Health.HEALTHY, ""));
    start(builder(backend).healthTaints(false));

    await().atMost(WAIT).until(() -> published().size() == 1);
    assertThat(published()).extracting(d -> d.getName()).containsExactly("port1");
  }

  @Test
  void whenTheApiServerDropsTaints_anUnhealthyDeviceIsLeftOutInstead() {
    api.dropTaints.set(true);
    start(builder(backend));
    await().atMost(WAIT).until(() -> published().size() == 2);

    backend.push(
        List.of(Backend.port(0, Health.UNHEALTHY, "ecc"), Backend.port(1, Health.HEALTHY, "")));

    await().atMost(WAIT).until(() -> !driver.slices().taintsSupported());
    await().atMost(WAIT).until(() -> published().size() == 1);
    assertThat(published()).extracting(d -> d.getName()).containsExactly("port1");
  }

  @Test
  void healthChangedDuringAnApiServerOutage_landsWhenItIsBack() {
    start(builder(backend));
    await().atMost(WAIT).until(() -> published().size() == 2);
    api.down.set(true);

    backend.push(
        List.of(Backend.port(0, Health.UNHEALTHY, "ecc"), Backend.port(1, Health.HEALTHY, "")));
    await().atMost(WAIT).until(() -> api.refused.get() > 0);
    backend.push(
        List.of(
            Backend.port(0, Health.UNHEALTHY, "ecc"),
            Backend.port(1, Health.UNHEALTHY, "link-down")));
    api.down.set(false);

    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> !taints("port0").isEmpty() && !taints("port1").isEmpty());
    assertThat(taints("port1")).extracting(DeviceTaint::getValue).containsExactly("link-down");
  }

  @Test
  void aPartitionedCardIsPublishedWithItsCounterSet_andEachPartitionConsumesItsShare() {
    start(builder(new CardBackend()));

    await().atMost(WAIT).until(() -> published().size() == 3);
    List<ResourceSlice> slices =
        api.client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems();
    assertThat(slices.stream().flatMap(s -> s.getSpec().getSharedCounters().stream()))
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getName()).isEqualTo("card0");
              assertThat(c.getCounters().get("ports").getValue()).isEqualTo(new Quantity("2"));
            });
    assertThat(device("card0").orElseThrow().getConsumesCounters())
        .singleElement()
        .satisfies(
            c -> assertThat(c.getCounters().get("ports").getValue()).isEqualTo(new Quantity("2")));
    assertThat(device("port1").orElseThrow().getConsumesCounters())
        .singleElement()
        .satisfies(
            c -> assertThat(c.getCounters().get("ports").getValue()).isEqualTo(new Quantity("1")));
  }

  @Test
  void aSharedDevice_isPublishedForMultipleAllocations_andEachClaimGetsItsShare() {
    SharingBackend sharing = new SharingBackend();
    start(
        builder(sharing)
            .mapping(
                BackendDevices.builder()
                    .capacities(d -> Map.of("bandwidth", "10G"))
                    .allowMultipleAllocations(d -> true)
                    .capacityPolicies(
                        d ->
                            Map.of(
                                "bandwidth",
                                new CapacityRequestPolicyBuilder()
                                    .withDefault(new Quantity("1G"))
                                    .withValidValues(new Quantity("1G"), new Quantity("5G"))
                                    .build()))
                    .build()));
    await().atMost(WAIT).until(() -> published().size() == 2);
    assertThat(device("port0").orElseThrow().getAllowMultipleAllocations()).isTrue();
    assertThat(
            device("port0")
                .orElseThrow()
                .getCapacity()
                .get("bandwidth")
                .getRequestPolicy()
                .getDefault())
        .isEqualTo(new Quantity("1G"));

    DeviceRequestAllocationResult a = result("nic", "port0");
    a.setShareID("0b7a2d3c-0000-4000-8000-000000000001");
    a.setConsumedCapacity(Map.of("bandwidth", new Quantity("5G")));
    DeviceRequestAllocationResult b = result("nic", "port0");
    b.setShareID("0b7a2d3c-0000-4000-8000-000000000002");
    b.setConsumedCapacity(Map.of("bandwidth", new Quantity("1G")));
    ResourceClaim first = allocatedClaim("first", a);
    ResourceClaim second = allocatedClaim("second", b);

    assertThat(prepareError(first)).isEmpty();
    assertThat(prepareError(second)).isEmpty();

    assertThat(sharing.seen)
        .extracting(s -> s.shareId().orElseThrow() + "=" + s.consumedCapacity().get("bandwidth"))
        .containsExactly(
            "0b7a2d3c-0000-4000-8000-000000000001=5G", "0b7a2d3c-0000-4000-8000-000000000002=1G");
  }

  @Test
  void anAdminClaimIsPreparedBesideTheOwner_andDoesNotTakeTheDevice() {
    start(builder(backend));
    await().atMost(WAIT).until(() -> published().size() == 2);
    ResourceClaim owner = allocatedClaim("owner", result("fpga", "port0"));
    DeviceRequestAllocationResult adminResult = result("monitor", "port0");
    adminResult.setAdminAccess(true);
    ResourceClaim admin = allocatedClaim("monitor", adminResult);
    ResourceClaim intruder = allocatedClaim("intruder", result("fpga", "port0"));

    assertThat(prepareError(owner)).isEmpty();
    assertThat(prepareError(admin)).isEmpty();
    kubelet.unprepare(host.draSocket(), wire(admin));

    assertThat(prepareError(intruder))
        .contains("device port0 is prepared for claim " + owner.getMetadata().getUid());
    kubelet.unprepare(host.draSocket(), wire(owner));
    assertThat(prepareError(intruder)).isEmpty();
  }

  @Test
  void anAdminClaimMayPrepareAnUnhealthyDevice_anOrdinaryOneMayNot() {
    backend.devices =
        List.of(Backend.port(0, Health.UNHEALTHY, "ecc"), Backend.port(1, Health.HEALTHY, ""));
    start(builder(backend));
    await().atMost(WAIT).until(() -> !taints("port0").isEmpty());
    DeviceRequestAllocationResult adminResult = result("monitor", "port0");
    adminResult.setAdminAccess(true);

    assertThat(prepareError(allocatedClaim("monitor", adminResult))).isEmpty();
    assertThat(prepareError(allocatedClaim("user", result("fpga", "port0")))).contains("unhealthy");
  }

  @Test
  void preparedDevicesReportTheirNetworkDataOnTheClaim() {
    start(builder(new NicBackend()));
    await().atMost(WAIT).until(() -> published().size() == 2);
    ResourceClaim claim = allocatedClaim("net", result("nic", "port1"));

    assertThat(prepareError(claim)).isEmpty();

    await().atMost(WAIT).until(() -> read(claim).getStatus().getDevices().size() == 1);
    AllocatedDeviceStatus status = read(claim).getStatus().getDevices().get(0);
    assertThat(status.getDriver()).isEqualTo(DRIVER);
    assertThat(status.getPool()).isEqualTo(NODE);
    assertThat(status.getDevice()).isEqualTo("port1");
    assertThat(status.getNetworkData().getInterfaceName()).isEqualTo("net1");
    assertThat(status.getNetworkData().getHardwareAddress()).isEqualTo("02:00:00:00:00:01");
    assertThat(status.getNetworkData().getIps()).containsExactly("10.0.0.1/24");
    assertThat(read(claim).getStatus().getAllocation()).isNotNull();
  }

  @Test
  void aStatusForADeviceTheClaimWasNotAllocated_isDroppedNotRetriedForever() {
    start(builder(backend));
    await().atMost(WAIT).until(() -> published().size() == 2);
    ResourceClaim claim = allocatedClaim("other", result("fpga", "port0"));

    var written =
        driver
            .claimStatus()
            .set(
                new io.github.deviceplugin4j.dra.slices.ClaimStatusWriter.ClaimRef(
                    "team-a", "other", claim.getMetadata().getUid()),
                new io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatusBuilder()
                    .withDevice("port1")
                    .build());

    assertThat(written)
        .failsWithin(WAIT)
        .withThrowableThat()
        .withMessageContaining("not allocated device(s) [port1/]");
    assertThat(read(claim).getStatus().getDevices()).isEmpty();
  }

  @Test
  void bindingConditionsArePublished_andAttachedDuringAnOutageLandsOnTheClaimAfterIt()
      throws Exception {
    start(
        builder(backend)
            .mapping(
                BackendDevices.builder()
                    .bindingConditions(
                        d ->
                            BackendDevices.BindingConditions.of(
                                "example.com/attached", "example.com/attach-failed"))
                    .build()));
    await().atMost(WAIT).until(() -> published().size() == 2);
    var published = device("port0").orElseThrow();
    assertThat(published.getBindsToNode()).isTrue();
    assertThat(published.getBindingConditions()).containsExactly("example.com/attached");
    assertThat(published.getBindingFailureConditions())
        .containsExactly("example.com/attach-failed");
    DeviceRequestAllocationResult r = result("fpga", "port0");
    r.setBindingConditions(List.of("example.com/attached"));
    r.setBindingFailureConditions(List.of("example.com/attach-failed"));
    ResourceClaim claim = allocatedClaim("bound", r);

    api.down.set(true);
    var written = driver.deviceAttached(claim(claim), "port0");
    await().atMost(WAIT).until(() -> api.refused.get() > 0);
    assertThat(written).isNotDone();
    api.down.set(false);

    written.get(90, TimeUnit.SECONDS);
    AllocatedDeviceStatus status = read(claim).getStatus().getDevices().get(0);
    assertThat(status.getDevice()).isEqualTo("port0");
    assertThat(status.getConditions())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getType()).isEqualTo("example.com/attached");
              assertThat(c.getStatus()).isEqualTo("True");
            });
  }
}
