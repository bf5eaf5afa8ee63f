package io.github.deviceplugin4j.examples.genericdra;

import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import io.github.deviceplugin4j.examples.fixtures.UsbFixture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The node the driver's tests run on: serial ports ttyUSB0 and ttyUSB1 (and ttyS0, not matched), a
 * YubiKey (1050:0407, serial 12345) on USB port 1-2, an Intel NIC 0000:17:00.0 (8086:1521, class
 * 020000, NUMA 1), an NVIDIA GPU (not matched), {@code /dev/vfio/vfio} and {@code
 * /dev/snd/controlC0}; and a configuration file with three resources, each shared 2x.
 */
final class DraTestNode {
  static final String DRIVER = GenericDraDriver.DEFAULT_DRIVER_NAME;

  /**
   * A serial-port group (glob), a USB group and a PCI group, each with a count that DRA ignores.
   */
  static final String THREE =
      """
      resources:
        - name: serial
          count: 2
          groups:
            - paths: ["/dev/ttyUSB*"]
              env: {SERIAL: "yes"}
        - name: yubikey
          count: 2
          groups:
            - usb: [{vendor: "1050", product: "0407"}]
        - name: nic
          count: 2
          groups:
            - pci: [{vendor: "8086", class: "0200"}]
              deviceNodes: ["/dev/vfio/vfio"]
      """;

  /** {@link #THREE} and a fourth resource. */
  static final String FOUR =
      THREE
          + """
            - name: audio
              groups:
                - paths: ["/dev/snd/*"]
          """;

  final SysfsTree tree;
  final Path config;

  /**
   * Writes the node's sysfs and device nodes under {@code root} and {@link #THREE} in {@code
   * etc/config.yaml} next to it.
   *
   * @param root the node's root directory
   * @param etc the configuration file's directory
   */
  DraTestNode(Path root, Path etc) throws IOException {
    tree = SysfsTree.create(root);
    tree.deviceNode("ttyUSB0");
    tree.deviceNode("ttyUSB1");
    tree.deviceNode("ttyS0");
    tree.deviceNode("vfio/vfio");
    tree.deviceNode("snd/controlC0");
    UsbFixture usb = new UsbFixture(tree);
    usb.device("1-2", 4, "1050", "0407", "12345");
    usb.device("1-3", 5, "046d", "c52b", null);
    tree.pciDevice("0000:17:00.0", 1, "0x8086", "0x1521", "0x020000");
    tree.pciDevice("0000:18:00.0", 0, "0x10de", "0x2330", "0x030200");
    config = Files.createDirectories(etc).resolve("config.yaml");
    Files.writeString(config, THREE);
  }
}
