package io.github.deviceplugin4j.examples.genericdra;

import static io.github.deviceplugin4j.examples.genericdra.DraTestNode.DRIVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.dra.testkit.DraCluster;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import io.github.deviceplugin4j.dra.testkit.DraTest;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The generic configuration served with {@code --dra} on a simulated node from {@code @DraTest}:
 * the fake kubelet registers the driver, the mock API server holds its slices (each device with its
 * sysfs attributes), a claim is prepared into a CDI spec with the group's nodes and environment,
 * and a change of the file republishes the slices while a broken one is refused.
 */
@DraTest
class GenericDraOnKubeletTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String KEY = BackendDevices.deviceName("yubikey-usb-1-2");
  private static final String NIC = BackendDevices.deviceName("nic-0000:17:00.0");
  private static final String PORT0 = BackendDevices.deviceName("serial-ttyUSB0");
  private static final String AUDIO = BackendDevices.deviceName("audio-snd_controlC0");

  @TempDir Path root;
  @TempDir Path run;
  DraCluster cluster;
  DraTestNode node;
  GenericDraDriver generic;
  DraPluginHost host;

  @BeforeEach
  void start() throws Exception {
    node = new DraTestNode(root, run.resolve("etc"));
    GenericDraDriver.Options options =
        GenericDraDriver.Options.parse(
            new String[] {
              "--dra",
              "--config=" + node.config,
              "--root=" + root,
              "--poll-interval=100ms",
              "--cdi-dir=" + cluster.cdiDir()
            },
            Map.of("NODE_NAME", cluster.nodeName()));
    generic = GenericDraDriver.start(options, b -> b.kubernetesClient(cluster.client()));
    host =
        DraPluginHost.builder(DRIVER, generic.driver())
            .pluginDir(cluster.pluginDir(DRIVER))
            .registryDir(cluster.registryDir())
            .start();
    cluster.kubelet().dra().awaitRegistration(DRIVER, WAIT);
  }

  @AfterEach
  void stop() {
    if (host != null) {
      host.close();
    }
    if (generic != null) {
      generic.close();
    }
  }

  /** The devices of this node's slices, by name. */
  private Map<String, Device> published() {
    Map<String, Device> out = new TreeMap<>();
    for (ResourceSlice s :
        cluster.client().dynamicResourceAllocation().v1().resourcesSlices().list().getItems()) {
      s.getSpec().getDevices().forEach(d -> out.put(d.getName(), d));
    }
    return out;
  }

  private Map<String, Device> awaitPublished(int count) {
    return await().atMost(WAIT).until(this::published, m -> m.size() == count);
  }

  private static Object value(Device d, String attribute) {
    DeviceAttribute a = d.getAttributes().get(attribute);
    if (a == null) {
      return null;
    }
    return a.getString() != null ? a.getString() : a.getInt();
  }

  @Test
  void eachDeviceIsPublishedOnceWithItsSysfsAttributes() {
    Map<String, Device> devices = awaitPublished(4);

    assertThat(devices)
        .as("count: 2 shares each device, which is published once: two ports, one key, one NIC")
        .containsOnlyKeys(PORT0, BackendDevices.deviceName("serial-ttyUSB1"), KEY, NIC);
    Device key = devices.get(KEY);
    assertThat(value(key, GenericDraBackend.RESOURCE)).isEqualTo("generic.example.com/yubikey");
    assertThat(value(key, "vendor")).isEqualTo("1050");
    assertThat(value(key, "product")).isEqualTo("0407");
    assertThat(value(key, "serial")).isEqualTo("12345");
    assertThat(value(key, "usbPort")).isEqualTo("1-2");
    Device nic = devices.get(NIC);
    assertThat(value(nic, "vendor")).isEqualTo("8086");
    assertThat(value(nic, "device")).isEqualTo("1521");
    assertThat(value(nic, "pciClass")).isEqualTo("020000");
    assertThat(value(nic, "pciAddress")).isEqualTo("0000:17:00.0");
    assertThat(value(nic, BackendDevices.NUMA_NODE_ATTRIBUTE)).isEqualTo(1L);
    assertThat(value(devices.get(PORT0), "path")).isEqualTo("/dev/ttyUSB0");
  }

  @Test
  void aClaimIsPreparedWithTheGroupsNodesAndEnvironment() throws Exception {
    awaitPublished(4);
    FakeKubelet kubelet = cluster.kubelet();
    ResourceClaim claim = cluster.assign("team-a", "key", "device", DRIVER, KEY);
    String uid = claim.getMetadata().getUid();

    DraResult prepared =
        kubelet
            .dra()
            .prepareResources("pod-1", DRIVER, List.of(new DraClaim("team-a", uid, "key")));

    assertThat(prepared.ok()).as("%s", prepared).isTrue();
    assertThat(prepared.claim(uid).devices())
        .singleElement()
        .satisfies(
            d ->
                assertThat(d.cdiDeviceIds())
                    .containsExactly(DRIVER + "/device=" + uid + "-" + KEY));
    String spec = Files.readString(generic.driver().cdiSpecFile(uid));
    assertThat(spec).contains("/dev/bus/usb/001/004").contains("USB_DEVICES=1-2");

    DraResult unprepared = kubelet.dra().unprepareResources("pod-1", DRIVER);
    assertThat(unprepared.ok()).as("%s", unprepared).isTrue();
    assertThat(generic.driver().cdiSpecFile(uid)).doesNotExist();
  }

  @Test
  void aConfigChangeRepublishesTheSlicesAndABrokenOneIsRefused() throws Exception {
    awaitPublished(4);

    Files.writeString(node.config, DraTestNode.THREE.replace("vendor: \"1050\"", "vendor: 1050"));
    await().atMost(WAIT).until(() -> generic.lastError().contains("usb[0].vendor"));
    assertThat(generic.lastError()).startsWith("resources[1].groups[0].usb[0].vendor: ");
    assertThat(published()).containsKey(KEY);

    Files.writeString(node.config, DraTestNode.FOUR);
    Map<String, Device> devices = awaitPublished(5);
    assertThat(devices).containsKeys(AUDIO, KEY);
    assertThat(value(devices.get(AUDIO), GenericDraBackend.RESOURCE))
        .isEqualTo("generic.example.com/audio");
    assertThat(generic.lastError()).isEmpty();
  }

  @Test
  void aMissingNodeTakesTheDeviceOutOfTheSlices() {
    awaitPublished(4);

    node.tree.delete(root.resolve("dev/ttyUSB0"));
    generic.backend().rescan();

    assertThat(awaitPublished(3)).doesNotContainKey(PORT0);
  }

  /**
   * Sharing: the key is published with a capacity of two shares, and two claims, each given one
   * share of it (a share ID and the consumed capacity, as the scheduler writes them), are both
   * prepared on it.
   */
  @Test
  void countBecomesACapacityThatClaimsShare_andTwoClaimsArePreparedOnOneDevice() {
    Device key = awaitPublished(4).get(KEY);
    assertThat(key.getAllowMultipleAllocations()).isTrue();
    var shares = key.getCapacity().get(GenericDraBackend.SHARES);
    assertThat(shares.getValue().getAmount()).isEqualTo("2");
    assertThat(shares.getRequestPolicy().getDefault().getAmount()).isEqualTo("1");
    assertThat(shares.getRequestPolicy().getValidRange().getMax().getAmount()).isEqualTo("2");
    FakeKubelet kubelet = cluster.kubelet();
    ResourceClaim first =
        cluster
            .scheduler()
            .assign("team-a", "first", share("5f0c8a59-0000-4000-8000-000000000001"));
    ResourceClaim second =
        cluster
            .scheduler()
            .assign("team-a", "second", share("5f0c8a59-0000-4000-8000-000000000002"));

    DraResult a =
        kubelet
            .dra()
            .prepareResources(
                "pod-1",
                DRIVER,
                List.of(new DraClaim("team-a", first.getMetadata().getUid(), "first")));
    DraResult b =
        kubelet
            .dra()
            .prepareResources(
                "pod-2",
                DRIVER,
                List.of(new DraClaim("team-a", second.getMetadata().getUid(), "second")));

    assertThat(a.ok()).as("%s", a).isTrue();
    assertThat(b.ok()).as("%s", b).isTrue();
  }

  /** One share of the key's capacity, as the scheduler allocates it. */
  private DeviceRequestAllocationResult share(String shareId) {
    DeviceRequestAllocationResult r =
        DraScheduler.device("device", DRIVER, cluster.nodeName(), KEY);
    r.setShareID(shareId);
    r.setConsumedCapacity(
        Map.of(GenericDraBackend.SHARES, new io.fabric8.kubernetes.api.model.Quantity("1")));
    return r;
  }
}
