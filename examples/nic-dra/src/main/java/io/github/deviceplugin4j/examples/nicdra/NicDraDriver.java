package io.github.deviceplugin4j.examples.nicdra;

import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.nic.NicConfig;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * The NIC example served as a DRA driver: every VF of the configured pools is a device of this
 * node's pool (attribute {@value #PCI_ADDRESS}), a claim's VFs are prepared as the device plugin
 * allocates them (device-info files for the CNI, {@code /dev/vfio} nodes for vfio-pci VFs), and
 * each prepared VF's interface name and MAC address are written to the claim's {@code
 * status.devices[].networkData}, where network plugins (Multus, a CNI reading the claim) find them.
 *
 * <p>Run: {@code java -jar deviceplugin4j-example-nic-dra.jar --root=/host} with the NIC example's
 * settings ({@link NicConfig#parse}), {@code NODE_NAME} from the downward API, and optionally
 * {@code NIC_DRA_DRIVER_NAME}, {@code NIC_DRA_CDI_DIR} and {@code NIC_DRA_PLUGIN_DIR}.
 *
 * <pre>{@code
 * NicDraDriver.builder(config, "nic.example.com", nodeName, Path.of("/var/run/cdi")).host().run();
 * }</pre>
 */
public final class NicDraDriver {

  /** The driver name used when none is given. */
  public static final String DEFAULT_DRIVER_NAME = "nic.example.com";

  /** The attribute holding the VF's PCI address. */
  public static final String PCI_ADDRESS = "pciAddress";

  /** The CDI class of the claims' specs. */
  public static final String CDI_CLASS = "vf";

  private NicDraDriver() {}

  /**
   * Runs the driver until SIGTERM ({@link NicDraCommand}: {@code --help} lists the settings).
   *
   * @param args the NIC example's options
   */
  public static void main(String[] args) {
    System.exit(
        PluginCli.execute(
            new NicDraCommand(System.getenv()),
            io.github.deviceplugin4j.examples.common.EnvironmentDefaults.none(),
            args));
  }

  /**
   * The driver of every VF of the configured pools, not yet built.
   *
   * @param config the NIC example's settings (root, pools, device-info directory)
   * @param driverName the DRA driver's name
   * @param nodeName this node's name
   * @param cdiDir where the claims' CDI specs go
   * @return the driver's builder
   */
  public static BackendDriver.Builder builder(
      NicConfig config, String driverName, String nodeName, Path cdiDir) {
    Objects.requireNonNull(config, "config");
    NicDraBackend backend = new NicDraBackend(config, driverName);
    return BackendDriver.builder(driverName, backend)
        .nodeName(nodeName)
        .cdiDirectory(cdiDir)
        .cdiKind(driverName, CDI_CLASS)
        .mapping(BackendDevices.builder().attributes(d -> Map.of(PCI_ADDRESS, d.id())).build());
  }
}
