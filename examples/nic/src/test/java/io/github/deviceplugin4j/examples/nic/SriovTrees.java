package io.github.deviceplugin4j.examples.nic;

import io.github.deviceplugin4j.examples.fixtures.SriovFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Path;
import java.util.List;

/** The standard test node: ens1f0 (NUMA 0) with 4 iavf VFs, ens1f1 (NUMA 1) with 2 vfio-pci VFs. */
final class SriovTrees {
  final SysfsTree tree;
  final SriovFixture nic;
  final List<String> netVfs;
  final List<String> vfioVfs;

  SriovTrees(Path root) {
    tree = SysfsTree.create(root);
    nic = new SriovFixture(tree);
    nic.physicalFunction("ens1f0", "0000:3b:00.0", 0, "0x8086", "0x1592", "ice");
    netVfs = nic.virtualFunctions("ens1f0", 4, "0x1889", "iavf");
    nic.physicalFunction("ens1f1", "0000:86:00.1", 1, "0x8086", "0x1592", "ice");
    vfioVfs = nic.virtualFunctions("ens1f1", 2, "0x1889", "vfio-pci");
  }

  static NicPool netdevicePool() {
    return new NicPool(
        "sriov_net",
        List.of("ens1f0", "ens1f1"),
        List.of("8086"),
        List.of("1889"),
        List.of("iavf"));
  }

  static NicPool vfioPool() {
    return new NicPool(
        "sriov_dpdk", List.of("ens1f0", "ens1f1"), List.of(), List.of(), List.of("vfio-pci"));
  }
}
