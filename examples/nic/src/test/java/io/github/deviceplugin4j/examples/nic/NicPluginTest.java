package io.github.deviceplugin4j.examples.nic;

import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.testing.PluginUnderTest;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SR-IOV plugin against the fake kubelet, over real Unix sockets. */
class NicPluginTest {
  static final String NET = "nic.example.com/sriov_net";
  static final String DPDK = "nic.example.com/sriov_dpdk";

  @TempDir Path root;
  @TempDir Path run;
  SriovTrees t;
  Path devinfo;
  PluginUnderTest plugin;
  FakeKubelet kubelet;
  NicBackend net;
  NicBackend dpdk;

  @BeforeEach
  void start() {
    t = new SriovTrees(root);
    devinfo = run.resolve("devinfo");
    NicConfig config =
        new NicConfig(
            root,
            "nic.example.com",
            List.of(SriovTrees.netdevicePool(), SriovTrees.vfioPool()),
            devinfo,
            Duration.ofHours(1), // the tests trigger every rescan themselves
            run.resolve("ready"));
    net = new NicBackend(config, config.pools().get(0));
    dpdk = new NicBackend(config, config.pools().get(1));
    plugin = PluginUnderTest.start(run, List.of(net, dpdk));
    kubelet = plugin.kubelet();
  }

  @AfterEach
  void stop() {
    if (plugin != null) {
      plugin.close();
    }
  }

  @Test
  void advertisesEachPoolsVfsWithTheirNumaNode() {
    assertThat(kubelet.awaitRegistration(NET, WAIT).preferredAllocationAvailable()).isFalse();
    kubelet.awaitRegistration(DPDK, WAIT);

    assertThat(kubelet.awaitDevices(NET, d -> d.size() == 4, WAIT))
        .allSatisfy(
            d -> {
              assertThat(d.healthy()).isTrue();
              assertThat(d.numaNodes()).containsExactly(0L);
            })
        .extracting(DeviceState::id)
        .containsExactlyInAnyOrderElementsOf(t.netVfs);
    assertThat(kubelet.awaitDevices(DPDK, d -> d.size() == 2, WAIT))
        .allSatisfy(d -> assertThat(d.numaNodes()).containsExactly(1L))
        .extracting(DeviceState::id)
        .containsExactlyInAnyOrderElementsOf(t.vfioVfs);
  }

  @Test
  void pfLinkDownTurnsItsVfsUnhealthyAndUpHealthyAgain() {
    kubelet.awaitDevices(
        NET, d -> d.size() == 4 && d.stream().allMatch(DeviceState::healthy), WAIT);
    kubelet.awaitDevices(
        DPDK, d -> d.size() == 2 && d.stream().allMatch(DeviceState::healthy), WAIT);

    t.nic.linkState("ens1f0", false);
    net.rescan();
    dpdk.rescan();
    kubelet.awaitDevices(NET, d -> d.stream().noneMatch(DeviceState::healthy), WAIT);
    assertThat(kubelet.allocatable(NET)).isZero();
    assertThat(kubelet.capacity(NET)).isEqualTo(4);
    assertThat(kubelet.allocatable(DPDK)).as("ens1f1 is still up").isEqualTo(2);

    t.nic.linkState("ens1f0", true);
    net.rescan();
    kubelet.awaitDevices(NET, d -> d.stream().allMatch(DeviceState::healthy), WAIT);
    assertThat(kubelet.allocatable(NET)).isEqualTo(4);
  }

  @Test
  void netdeviceAllocationListsTheVfsAndWritesTheirDeviceInfo() throws Exception {
    kubelet.awaitDevices(NET, d -> d.size() == 4, WAIT);

    Allocation a = kubelet.allocate(NET, 2);

    assertThat(a.problems()).isEmpty();
    assertThat(a.devices()).as("a netdevice VF needs no device node").isEmpty();
    assertThat(a.envs()).containsOnlyKeys(NicBackend.envName(NET));
    assertThat(a.envs().get(NicBackend.envName(NET)).split(","))
        .containsExactlyInAnyOrderElementsOf(a.deviceIds());
    for (String vf : a.deviceIds()) {
      Path file = devinfo.resolve("nic.example.com-sriov_net-" + vf + "-device.json");
      assertThat(Files.readString(file))
          .contains(
              "\"type\":\"pci\"",
              "\"pci-address\":\"" + vf + "\"",
              "\"pf-pci-address\":\"0000:3b:00.0\"");
    }
    assertThat(Files.list(devinfo)).hasSize(2);
  }

  @Test
  void vfioAllocationGivesTheGroupNodeAndTheContainerNode() throws Exception {
    kubelet.awaitDevices(DPDK, d -> d.size() == 2, WAIT);
    String vf = t.vfioVfs.get(1);
    String group = t.nic.vfDir(vf).resolve("iommu_group").toRealPath().getFileName().toString();

    Allocation a = kubelet.allocate(DPDK, vf);

    assertThat(a.devices())
        .containsExactlyInAnyOrder(
            new DeviceSpec("/dev/vfio/vfio", "/dev/vfio/vfio", "rw"),
            new DeviceSpec("/dev/vfio/" + group, "/dev/vfio/" + group, "rw"));
    assertThat(a.envs()).containsEntry(NicBackend.envName(DPDK), vf);
  }

  @Test
  void vfsThatDisappearLeaveTheKubeletAndTheirDeviceInfoIsRemoved() {
    kubelet.awaitDevices(NET, d -> d.size() == 4, WAIT);
    Allocation a = kubelet.allocate(NET, 1);
    Path file = net.deviceInfoFile(a.deviceIds().get(0));
    assertThat(file).exists();

    t.nic.removeVirtualFunctions("ens1f0");
    net.rescan();

    kubelet.awaitDevices(NET, List::isEmpty, WAIT);
    org.awaitility.Awaitility.await().atMost(WAIT).until(() -> !Files.exists(file));
  }

  @Test
  void reRegistersAfterAKubeletRestart() {
    kubelet.awaitRegistration(NET, WAIT);
    kubelet.awaitRegistration(DPDK, WAIT);

    Mark restarted = kubelet.restart();

    kubelet.awaitRegistration(NET, restarted, WAIT);
    kubelet.awaitRegistration(DPDK, restarted, WAIT);
    // The restarted kubelet knows the devices again once the new ListAndWatch delivered them.
    kubelet.awaitDevices(
        NET, d -> d.size() == 4 && d.stream().allMatch(DeviceState::healthy), WAIT);
    kubelet.awaitDevices(
        DPDK, d -> d.size() == 2 && d.stream().allMatch(DeviceState::healthy), WAIT);
    assertThat(kubelet.allocate(DPDK, 1).devices()).hasSize(2);
  }

  @Test
  void malformedPfIsSkippedAndTheOtherPoolKeepsServing() {
    kubelet.awaitDevices(NET, d -> d.size() == 4, WAIT);
    kubelet.awaitDevices(DPDK, d -> d.size() == 2, WAIT);

    t.tree.write(t.nic.pf("ens1f1").resolve("sriov_numvfs"), "-x-\n");
    dpdk.rescan();

    kubelet.awaitDevices(DPDK, List::isEmpty, WAIT);
    assertThat(dpdk.problems()).anySatisfy(p -> assertThat(p).contains("'-x-'"));
    assertThat(kubelet.allocate(NET, 1).deviceIds()).hasSize(1);
  }

  @Test
  void stoppingThePluginRemovesTheDeviceInfoItWrote() throws Exception {
    kubelet.awaitDevices(NET, d -> d.size() == 4, WAIT);
    kubelet.allocate(NET, 3);
    assertThat(Files.list(devinfo)).hasSize(3);

    plugin.host().close();

    assertThat(Files.list(devinfo)).isEmpty();
  }
}
