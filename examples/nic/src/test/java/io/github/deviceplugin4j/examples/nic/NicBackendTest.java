package io.github.deviceplugin4j.examples.nic;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NicBackendTest {
  static final String NET_ENV = "PCIDEVICE_NIC_EXAMPLE_COM_SRIOV_NET";

  @TempDir Path root;
  @TempDir Path devinfo;
  SriovTrees t;
  NicBackend net;
  NicBackend dpdk;

  @BeforeEach
  void setUp() {
    t = new SriovTrees(root);
    NicConfig config =
        NicConfig.of(root, devinfo, SriovTrees.netdevicePool(), SriovTrees.vfioPool());
    net = new NicBackend(config, config.pools().get(0));
    dpdk = new NicBackend(config, config.pools().get(1));
  }

  @Test
  void envNameFollowsTheSriovConvention() {
    assertThat(NicBackend.envName("intel.com/intel_sriov-netdevice"))
        .isEqualTo("PCIDEVICE_INTEL_COM_INTEL_SRIOV_NETDEVICE");
    assertThat(net.resourceName()).isEqualTo("nic.example.com/sriov_net");
  }

  @Test
  void netdeviceVfsGetTheVariableAndNoDeviceNode() throws Exception {
    List<Device> devices = net.devices();

    assertThat(devices).extracting(Device::id).containsExactlyElementsOf(t.netVfs);
    Device vf = devices.get(0);
    assertThat(vf.health()).isEqualTo(Health.HEALTHY);
    assertThat(vf.numaNodes()).containsExactly(0);
    assertThat(vf.allocation().env()).isEqualTo(Map.of(NET_ENV, "0000:3b:02.0"));
    assertThat(vf.allocation().deviceNodes()).isEmpty();
  }

  @Test
  void vfioVfsGetTheirGroupNodeAndTheContainerNode() throws Exception {
    List<Device> devices = dpdk.devices();

    assertThat(devices).extracting(Device::id).containsExactlyElementsOf(t.vfioVfs);
    String group =
        t.nic.vfDir(t.vfioVfs.get(0)).resolve("iommu_group").toRealPath().getFileName().toString();
    assertThat(devices.get(0).allocation().deviceNodes())
        .containsExactly(DeviceNode.rw("/dev/vfio/vfio"), DeviceNode.rw("/dev/vfio/" + group));
    assertThat(devices.get(0).numaNodes()).containsExactly(1);
  }

  @Test
  void poolFiltersByDriver() throws Exception {
    t.nic.rebind(t.netVfs.get(3), "vfio-pci");

    assertThat(net.devices()).extracting(Device::id).doesNotContain(t.netVfs.get(3)).hasSize(3);
    assertThat(dpdk.devices()).extracting(Device::id).contains(t.netVfs.get(3)).hasSize(3);
  }

  @Test
  void healthFollowsThePfLink() throws Exception {
    t.nic.linkState("ens1f0", false);
    assertThat(net.devices()).extracting(Device::health).containsOnly(Health.UNHEALTHY);

    t.nic.linkState("ens1f0", true);
    assertThat(net.devices()).extracting(Device::health).containsOnly(Health.HEALTHY);
  }

  @Test
  void allocationWritesDeviceInfoAndAnswersTheDefault() throws Exception {
    List<Device> devices = net.devices().subList(0, 2);
    ContainerAllocation merged = devices.get(0).allocation().merge(devices.get(1).allocation());

    ContainerAllocation answer =
        net.allocate(new AllocationRequest(net.resourceName(), devices, merged));

    assertThat(answer.env()).isEqualTo(Map.of(NET_ENV, "0000:3b:02.0,0000:3b:02.1"));
    Path file = devinfo.resolve("nic.example.com-sriov_net-0000:3b:02.0-device.json");
    assertThat(net.deviceInfoFile("0000:3b:02.0")).isEqualTo(file);
    assertThat(file)
        .hasContent(
            "{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":{\"pci-address\":\"0000:3b:02.0\","
                + "\"pf-pci-address\":\"0000:3b:00.0\"}}");
    assertThat(devinfo.resolve("nic.example.com-sriov_net-0000:3b:02.1-device.json")).exists();
    assertThat(devinfo.resolve("nic.example.com-sriov_net-0000:3b:02.2-device.json"))
        .doesNotExist();
  }

  @Test
  void deviceInfoIsRemovedWhenTheVfLeavesThePoolAndOnStop() throws Exception {
    List<Device> devices = net.devices();
    net.allocate(new AllocationRequest(net.resourceName(), devices, ContainerAllocation.empty()));
    assertThat(Files.list(devinfo)).hasSize(4);

    t.nic.rebind(t.netVfs.get(0), "vfio-pci");
    net.devices();
    assertThat(net.deviceInfoFile(t.netVfs.get(0))).doesNotExist();
    assertThat(net.deviceInfoFile(t.netVfs.get(1))).exists();

    t.nic.linkState("ens1f0", false);
    net.devices();
    assertThat(net.deviceInfoFile(t.netVfs.get(1))).as("an unhealthy VF keeps its file").exists();

    net.stop();
    assertThat(Files.list(devinfo)).isEmpty();
  }

  @Test
  void staleFilesOfVanishedVfsAreRemovedOthersKept() throws Exception {
    Files.writeString(devinfo.resolve("nic.example.com-sriov_net-0000:3b:09.0-device.json"), "{}");
    Files.writeString(devinfo.resolve("nic.example.com-sriov_net-0000:3b:02.1-device.json"), "{}");
    Files.writeString(devinfo.resolve("other.example.com-x-0000:3b:09.0-device.json"), "{}");

    net.devices();

    assertThat(Files.list(devinfo).map(p -> p.getFileName().toString()))
        .containsExactlyInAnyOrder(
            "nic.example.com-sriov_net-0000:3b:02.1-device.json",
            "other.example.com-x-0000:3b:09.0-device.json");
  }

  @Test
  void removedVfsDisappearAndComeBack() throws Exception {
    t.nic.removeVirtualFunctions("ens1f0");
    assertThat(net.devices()).isEmpty();
    assertThat(net.problems()).isEmpty();

    t.nic.virtualFunctions("ens1f0", 2, "0x1889", "iavf");
    assertThat(net.devices())
        .extracting(Device::id)
        .containsExactly("0000:3b:02.0", "0000:3b:02.1");
  }

  @Test
  void jsonQuotingEscapes() {
    assertThat(DeviceInfoFiles.quote("a\"b\\c\n")).isEqualTo("\"a\\\"b\\\\c\\u000a\"");
  }
}
