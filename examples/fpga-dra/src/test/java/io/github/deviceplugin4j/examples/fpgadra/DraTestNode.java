package io.github.deviceplugin4j.examples.fpgadra;

import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Path;

/**
 * The node the driver's tests run on: card 0000:5e:00.0 (NUMA 1, interface IFACE_1) with ports 0
 * (AFU_A) and 1 (AFU_B), and card 0000:af:00.0 (NUMA 0, interface IFACE_2) with port 2 (AFU_A).
 */
final class DraTestNode {
  static final String AFU_A = "d8424dc4a4a3c413f89e433683f9040b";
  static final String AFU_B = "f7df405cbd7acf7222f144b0b93acd18";
  static final String IFACE_1 = "69528db6eb31577a8c3668f9faa081f6";
  static final String IFACE_2 = "bfac4d851ee856fe8c95865ce1bbaa2d";

  final DflFixture fpga;

  /**
   * Writes the node's sysfs and device nodes.
   *
   * @param root the node's root directory
   */
  DraTestNode(Path root) {
    fpga = new DflFixture(SysfsTree.create(root));
    int first = fpga.card("0000:5e:00.0", 1, IFACE_1);
    fpga.port(first, 0, AFU_A);
    fpga.port(first, 1, AFU_B);
    int second = fpga.card("0000:af:00.0", 0, IFACE_2);
    fpga.port(second, 2, AFU_A);
  }
}
