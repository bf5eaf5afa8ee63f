package io.github.deviceplugin4j.examples.fpga;

import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Path;

/**
 * The standard test node: card 0000:5e:00.0 (NUMA 1, interface IFACE_1) with dfl-port.0 running
 * AFU_A and dfl-port.1 running AFU_B; card 0000:af:00.0 (interface IFACE_2) with dfl-port.2 running
 * AFU_A.
 */
final class DflTrees {
  static final String AFU_A = "d8424dc4a4a3c413f89e433683f9040b";
  static final String AFU_B = "f7df405cbd7acf7222f144b0b93acd18";
  static final String IFACE_1 = "69528db6eb31577a8c3668f9faa081f6";
  static final String IFACE_2 = "bfac4d851ee856fe8c95865ce1bbaa2d";

  final SysfsTree tree;
  final DflFixture fpga;

  /**
   * Builds the node.
   *
   * @param root where
   * @param secondCardNuma the {@code numa_node} of the second card ({@code -1}: none)
   */
  DflTrees(Path root, int secondCardNuma) {
    tree = SysfsTree.create(root);
    fpga = new DflFixture(tree);
    int r0 = fpga.card("0000:5e:00.0", 1, IFACE_1);
    fpga.port(r0, 0, AFU_A);
    fpga.port(r0, 1, AFU_B);
    int r1 = fpga.card("0000:af:00.0", secondCardNuma, IFACE_2);
    fpga.port(r1, 2, AFU_A);
  }
}
