package io.github.deviceplugin4j.examples.nicdra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.dra.testkit.DraCluster;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import io.github.deviceplugin4j.dra.testkit.DraTest;
import io.github.deviceplugin4j.examples.fixtures.SriovFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import io.github.deviceplugin4j.examples.nic.NicConfig;
import io.github.deviceplugin4j.examples.nic.NicPool;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NIC DRA driver on a simulated node ({@code @DraTest}): ens1f0 with two iavf VFs (interfaces
 * ens1f0v0/ens1f0v1) and ens1f1 with one vfio-pci VF. A prepared claim carries each VF's interface
 * name and MAC address in its status, written by the driver through the status subresource.
 */
@DraTest
class NicDraOnKubeletTest {
  private static final String DRIVER = NicDraDriver.DEFAULT_DRIVER_NAME;
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path root;
  DraCluster cluster;

  private List<String> netVfs;
  private List<String> vfioVfs;

  private NicConfig node() throws Exception {
    SysfsTree tree = SysfsTree.create(root.resolve("node"));
    SriovFixture nic = new SriovFixture(tree);
    nic.physicalFunction("ens1f0", "0000:3b:00.0", 0, "0x8086", "0x1592", "ice");
    netVfs = nic.virtualFunctions("ens1f0", 2, "0x1889", "iavf");
    nic.physicalFunction("ens1f1", "0000:86:00.1", 1, "0x8086", "0x1592", "ice");
    vfioVfs = nic.virtualFunctions("ens1f1", 1, "0x1889", "vfio-pci");
    for (int i = 0; i < netVfs.size(); i++) {
      // The kernel's MAC address of each VF interface.
      Files.writeString(
          nic.vfDir(netVfs.get(i)).resolve("net/ens1f0v" + i + "/address"),
          "02:11:22:33:44:0" + i + "\n");
    }
    NicPool pool =
        new NicPool("sriov", List.of("ens1f0", "ens1f1"), List.of(), List.of(), List.of());
    return NicConfig.of(root.resolve("node"), root.resolve("devinfo"), pool);
  }

  @Test
  void aPreparedClaimCarriesEachVfsInterfaceAndMacInItsStatus() throws Exception {
    NicConfig config = node();
    FakeKubelet kubelet = cluster.kubelet();
    BackendDriver driver =
        NicDraDriver.builder(config, DRIVER, cluster.nodeName(), cluster.cdiDir())
            .kubernetesClient(cluster.client())
            .build();
    driver.start();
    try (driver;
        DraPluginHost host =
            DraPluginHost.builder(DRIVER, driver)
                .pluginDir(cluster.pluginDir(DRIVER))
                .registryDir(cluster.registryDir())
                .start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      String vf0 = BackendDevices.deviceName(netVfs.get(0));
      String vf1 = BackendDevices.deviceName(netVfs.get(1));
      String dpdk = BackendDevices.deviceName(vfioVfs.get(0));
      ResourceClaim claim = allocate("net", vf1, dpdk);
      String uid = claim.getMetadata().getUid();

      DraResult prepared =
          kubelet
              .dra()
              .prepareResources("pod-1", DRIVER, List.of(new DraClaim("team-a", uid, "net")));

      assertThat(prepared.ok()).as("%s", prepared).isTrue();
      await().atMost(WAIT).until(() -> statuses("net").size() == 2);
      List<AllocatedDeviceStatus> statuses = statuses("net");
      assertThat(statuses).allSatisfy(s -> assertThat(s.getDriver()).isEqualTo(DRIVER));
      assertThat(statuses).allSatisfy(s -> assertThat(s.getPool()).isEqualTo(cluster.nodeName()));
      AllocatedDeviceStatus net = status(statuses, vf1);
      assertThat(net.getNetworkData().getInterfaceName()).isEqualTo("ens1f0v1");
      assertThat(net.getNetworkData().getHardwareAddress()).isEqualTo("02:11:22:33:44:01");
      AllocatedDeviceStatus vfio = status(statuses, dpdk);
      assertThat(vfio.getNetworkData()).as("a vfio-pci VF has no interface").isNull();
      assertThat(io.fabric8.kubernetes.client.utils.Serialization.asJson(vfio.getData()))
          .isEqualTo("{\"pciAddress\":\"" + vfioVfs.get(0) + "\"}");
      assertThat(statuses).extracting(AllocatedDeviceStatus::getDevice).doesNotContain(vf0);
      assertThat(root.resolve("devinfo")).isDirectory(); // the CNI's device-info files, as before

      assertThat(kubelet.dra().unprepareResources("pod-1", DRIVER).ok()).isTrue();
    }
  }

  private static AllocatedDeviceStatus status(List<AllocatedDeviceStatus> list, String device) {
    return list.stream().filter(s -> s.getDevice().equals(device)).findFirst().orElseThrow();
  }

  private List<AllocatedDeviceStatus> statuses(String claim) {
    ResourceClaim c =
        cluster
            .client()
            .dynamicResourceAllocation()
            .v1()
            .resourceClaims()
            .inNamespace("team-a")
            .withName(claim)
            .get();
    List<AllocatedDeviceStatus> list =
        c.getStatus().getDevices() == null ? List.of() : c.getStatus().getDevices();
    return list.stream().sorted(Comparator.comparing(AllocatedDeviceStatus::getDevice)).toList();
  }

  /** A claim allocated the given VFs, as the scheduler would write it. */
  private ResourceClaim allocate(String name, String... devices) {
    return cluster
        .scheduler()
        .assign(
            "team-a",
            name,
            java.util.Arrays.stream(devices)
                .map(d -> DraScheduler.device("vf", DRIVER, cluster.nodeName(), d))
                .toArray(DeviceRequestAllocationResult[]::new));
  }
}
