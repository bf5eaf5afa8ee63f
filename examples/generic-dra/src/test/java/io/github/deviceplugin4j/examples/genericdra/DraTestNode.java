package io.github.deviceplugin4j.examples.genericdra;

import io.github.deviceplugin4j.examples.fixtures.GenericNode;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The node the driver's tests run on ({@link GenericNode}: serial ports, a YubiKey on USB port 1-2,
 * an Intel NIC 0000:17:00.0 on NUMA 1, a sound card) and a configuration file with three resources,
 * each with a count of 2, which DRA publishes as a capacity two claims can share.
 */
final class DraTestNode {
  static final String DRIVER = GenericDraDriver.DEFAULT_DRIVER_NAME;

  /** Serial ports (glob), a YubiKey (vendor:product) and a NIC (PCI), each shared 2x. */
  static final String THREE = GenericNode.THREE;

  /** {@link #THREE} and a fourth resource, {@code audio}. */
  static final String FOUR = GenericNode.FOUR;

  final SysfsTree tree;
  final Path config;

  /**
   * Writes the node's sysfs and device nodes under {@code root} and {@link #THREE} in {@code
   * config.yaml} of {@code etc}.
   *
   * @param root the node's root directory
   * @param etc the configuration file's directory
   */
  DraTestNode(Path root, Path etc) throws IOException {
    tree = GenericNode.write(SysfsTree.create(root));
    config = Files.createDirectories(etc).resolve("config.yaml");
    Files.writeString(config, THREE);
  }
}
