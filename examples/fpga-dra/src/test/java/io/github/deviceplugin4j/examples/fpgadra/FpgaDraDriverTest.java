package io.github.deviceplugin4j.examples.fpgadra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.dra.Claim;
import io.github.deviceplugin4j.dra.PrepareResult;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import io.github.deviceplugin4j.dra.testkit.MockApiServers;
import io.github.deviceplugin4j.examples.fpga.DflPort;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The FPGA backend served as a DRA driver against fabric8's mock API server (CRUD mode): slices
 * with the ports' attributes, a claim prepared into a CDI spec and unprepared.
 */
class FpgaDraDriverTest {
  private static final String NODE = "node-1";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;
  private KubernetesMockServer server;
  private KubernetesClient client;
  private DraTestNode node;
  private BackendDriver driver;

  @BeforeEach
  void startApiServer() {
    server = MockApiServers.startCrud();
    client = server.createClient();
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .create();
    node = new DraTestNode(tmp.resolve("root"));
  }

  @AfterEach
  void stop() {
    if (driver != null) {
      driver.close();
    }
    client.close();
    MockApiServers.destroy(server);
  }

  private FpgaDraConfig config() {
    return FpgaDraConfig.parse(
        new String[] {
          "--root=" + tmp.resolve("root"),
          "--poll-interval=100ms",
          "--cdi-dir=" + tmp.resolve("cdi"),
          "--plugin-dir=" + tmp.resolve("p"),
          "--registry-dir=" + tmp.resolve("r")
        },
        Map.of("NODE_NAME", NODE));
  }

  private BackendDriver start() {
    driver = FpgaDraDriver.builder(config()).kubernetesClient(client).build();
    driver.start();
    return driver;
  }

  private List<io.fabric8.kubernetes.api.model.resource.v1.Device> published() {
    return client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems().stream()
        .filter(s -> s.getSpec().getDriver().equals(FpgaDraConfig.DEFAULT_DRIVER_NAME))
        .flatMap(s -> s.getSpec().getDevices().stream())
        .toList();
  }

  @Test
  void everyPortIsPublishedWithItsAcceleratorInterfacePciAddressAndNuma() {
    start();

    await().atMost(WAIT).until(() -> published().size() == 5); // 3 ports, 2 cards
    Map<String, Map<String, DeviceAttribute>> byName =
        published().stream()
            .collect(
                Collectors.toMap(
                    io.fabric8.kubernetes.api.model.resource.v1.Device::getName,
                    io.fabric8.kubernetes.api.model.resource.v1.Device::getAttributes));
    Map<String, DeviceAttribute> port0 = byName.get(BackendDevices.deviceName("dfl-port.0"));
    assertThat(port0.get(FpgaDraDriver.AFU_ID).getString()).isEqualTo(DraTestNode.AFU_A);
    assertThat(port0.get(FpgaDraDriver.INTERFACE_ID).getString()).isEqualTo(DraTestNode.IFACE_1);
    assertThat(port0.get(FpgaDraDriver.PCI_ADDRESS).getString()).isEqualTo("0000:5e:00.0");
    assertThat(port0.get(BackendDevices.NUMA_NODE_ATTRIBUTE).getInt()).isEqualTo(1L);
    Map<String, DeviceAttribute> port2 = byName.get(BackendDevices.deviceName("dfl-port.2"));
    assertThat(port2.get(FpgaDraDriver.PCI_ADDRESS).getString()).isEqualTo("0000:af:00.0");
    assertThat(port2.get(FpgaDraDriver.INTERFACE_ID).getString()).isEqualTo(DraTestNode.IFACE_2);
    List<ResourceSlice> slices =
        client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems();
    assertThat(slices).allSatisfy(s -> assertThat(s.getSpec().getNodeName()).isEqualTo(NODE));
  }

  private io.fabric8.kubernetes.api.model.resource.v1.Device device(String name) {
    return published().stream().filter(d -> d.getName().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void aCrashedPortAndItsCardAreTaintedUntilRepaired() {
    start();
    await().atMost(WAIT).until(() -> published().size() == 5); // 3 ports, 2 cards
    String port1 = BackendDevices.deviceName("dfl-port.1");
    String card = BackendDevices.deviceName(FpgaCards.CARD_PREFIX + "0000:5e:00.0");

    node.fpga.afuId(1, DflPort.CRASHED_AFU_ID);

    await().atMost(WAIT).until(() -> !device(port1).getTaints().isEmpty());
    assertThat(device(port1).getTaints())
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.getKey()).isEqualTo(FpgaDraConfig.DEFAULT_DRIVER_NAME + "/unhealthy");
              assertThat(t.getEffect()).isEqualTo("NoSchedule");
              assertThat(t.getValue()).isNotEmpty();
            });
    await().atMost(WAIT).until(() -> !device(card).getTaints().isEmpty());
    assertThat(device(BackendDevices.deviceName("dfl-port.0")).getTaints()).isEmpty();

    node.fpga.afuId(1, DraTestNode.AFU_B);

    await()
        .atMost(WAIT)
        .until(() -> device(port1).getTaints().isEmpty() && device(card).getTaints().isEmpty());
  }

  @Test
  void eachCardIsACounterSetThatTheWholeCardAndEachPortConsume() {
    start();
    await().atMost(WAIT).until(() -> published().size() == 5); // 3 ports, 2 cards
    String card = BackendDevices.deviceName(FpgaCards.CARD_PREFIX + "0000:5e:00.0");

    List<io.fabric8.kubernetes.api.model.resource.v1.CounterSet> sets =
        client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems().stream()
            .flatMap(s -> s.getSpec().getSharedCounters().stream())
            .toList();
    assertThat(sets)
        .extracting(io.fabric8.kubernetes.api.model.resource.v1.CounterSet::getName)
        .containsExactlyInAnyOrder(
            card, BackendDevices.deviceName(FpgaCards.CARD_PREFIX + "0000:af:00.0"));
    assertThat(
            sets.stream()
                .filter(c -> c.getName().equals(card))
                .findFirst()
                .orElseThrow()
                .getCounters()
                .get(FpgaCards.PORTS_COUNTER)
                .getValue()
                .getAmount())
        .isEqualTo("2");
    assertThat(device(card).getAttributes().get(FpgaDraDriver.KIND).getString()).isEqualTo("card");
    assertThat(device(card).getConsumesCounters())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getCounterSet()).isEqualTo(card);
              assertThat(c.getCounters().get(FpgaCards.PORTS_COUNTER).getValue().getAmount())
                  .isEqualTo("2");
            });
    for (String port : List.of("dfl-port.0", "dfl-port.1")) {
      assertThat(device(BackendDevices.deviceName(port)).getConsumesCounters())
          .singleElement()
          .satisfies(
              c -> {
                assertThat(c.getCounterSet()).isEqualTo(card);
                assertThat(c.getCounters().get(FpgaCards.PORTS_COUNTER).getValue().getAmount())
                    .isEqualTo("1");
              });
    }
  }

  @Test
  void preparingTheWholeCardGivesTheContainerEveryPortOfIt() throws Exception {
    start();
    await().atMost(WAIT).until(() -> published().size() == 5); // 3 ports, 2 cards
    String card = BackendDevices.deviceName(FpgaCards.CARD_PREFIX + "0000:5e:00.0");
    ResourceClaim claim = allocatedClaim("card", card);

    PrepareResult result =
        driver.prepare(
            new Claim("demo", claim.getMetadata().getUid(), claim.getMetadata().getName()));

    assertThat(result.error()).isEmpty();
    assertThat(Files.readString(driver.cdiSpecFile(claim.getMetadata().getUid())))
        .contains("/dev/dfl-port.0")
        .contains("/dev/dfl-port.1")
        .contains("DFL_PORTS=dfl-port.0,dfl-port.1")
        .doesNotContain("/dev/dfl-port.2");
  }

  @Test
  void preparingAnAllocatedClaimWritesTheCdiSpecOfItsPortsAndUnprepareRemovesIt() throws Exception {
    start();
    await().atMost(WAIT).until(() -> published().size() == 5); // 3 ports, 2 cards
    String device = BackendDevices.deviceName("dfl-port.2");
    ResourceClaim claim = allocatedClaim("accel", device);
    Claim wire = new Claim("demo", claim.getMetadata().getUid(), claim.getMetadata().getName());

    PrepareResult result = driver.prepare(wire);

    assertThat(result.error()).isEmpty();
    assertThat(result.devices())
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.deviceName()).isEqualTo(device);
              assertThat(d.poolName()).isEqualTo(NODE);
              assertThat(d.cdiDeviceIds())
                  .containsExactly(
                      "fpga.example.com/port=" + claim.getMetadata().getUid() + "-" + device);
            });
    Path spec = driver.cdiSpecFile(claim.getMetadata().getUid());
    assertThat(Files.readString(spec)).contains("/dev/dfl-port.2").contains("DFL_PORTS=dfl-port.2");

    driver.unprepare(wire, result.devices());

    assertThat(spec).doesNotExist();
  }

  private ResourceClaim allocatedClaim(String name, String device) {
    return DraScheduler.forNode(client, NODE)
        .assign(
            "demo",
            name,
            DraScheduler.device("fpga", FpgaDraConfig.DEFAULT_DRIVER_NAME, NODE, device));
  }

  @Test
  void withoutANodeNameTheConfigurationSaysWhereToSetIt() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> FpgaDraConfig.parse(new String[0], Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NODE_NAME");
  }

  @Test
  void flagsAndEnvironmentSetTheDirectories() {
    FpgaDraConfig c =
        FpgaDraConfig.parse(
            new String[] {"--driver-name=acc.example.org"},
            Map.of("NODE_NAME", "n", "FPGA_NODE_NAME", "m", "FPGA_POD_UID", "1234"));
    assertThat(c.nodeName()).isEqualTo("m");
    assertThat(c.pluginDir()).isEqualTo(Path.of("/var/lib/kubelet/plugins/acc.example.org"));
    assertThat(c.registryDir()).isEqualTo(Path.of("/var/lib/kubelet/plugins_registry"));
    assertThat(c.cdiDir()).isEqualTo(Path.of("/var/run/cdi"));
    assertThat(c.podUid()).contains("1234");
    assertThat(c.backendConfig().domain()).isEqualTo("acc.example.org");
  }
}
