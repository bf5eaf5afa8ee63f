package io.github.deviceplugin4j.examples.fpgadra;

import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.fpga.FpgaBackend;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The FPGA example served as a DRA (Dynamic Resource Allocation) driver instead of a device plugin,
 * from the same {@link FpgaBackend}: every port is a device of this node's pool, named after the
 * port, and so is every card as a whole ({@link FpgaCards}: the card and its ports are partitions
 * of one counter set, so the scheduler hands out either); a port has its accelerator ({@code
 * afuId}), region interface ({@code interfaceId}), card PCI address ({@code pciAddress}), region
 * and NUMA node as attributes. A claim picks ports with a CEL selector on those attributes;
 * preparing it writes one CDI spec giving the container the ports' device nodes and {@code
 * DFL_PORTS}.
 *
 * <p>It ships as its own jar and image, apart from the device plugin's (which does not carry the
 * DRA SDK or the Kubernetes client): {@code java -jar deviceplugin4j-example-fpga-dra.jar
 * --root=/host}; settings in {@link FpgaDraConfig}.
 *
 * <pre>{@code
 * FpgaDraConfig config = FpgaDraConfig.parse(args, System.getenv());
 * FpgaDraDriver.builder(config).host().pluginDir(config.pluginDir()).run();
 * }</pre>
 */
public final class FpgaDraDriver {

  /** The attribute holding the accelerator function ID loaded in the port (32 hex digits). */
  public static final String AFU_ID = "afuId";

  /** The attribute holding the interface ID of the card's partial-reconfiguration region. */
  public static final String INTERFACE_ID = "interfaceId";

  /** The attribute holding the card's PCI address, e.g. {@code 0000:5e:00.0}. */
  public static final String PCI_ADDRESS = "pciAddress";

  /** The attribute holding the card's FPGA region in sysfs, e.g. {@code region0}. */
  public static final String REGION = "region";

  /** The attribute telling a whole card ({@code card}) from one of its ports ({@code port}). */
  public static final String KIND = "kind";

  /** The CDI class of the claims' specs: CDI device names read {@code <driver>/port=...}. */
  public static final String CDI_CLASS = "port";

  private FpgaDraDriver() {}

  /**
   * Runs the driver until SIGTERM; see {@code --help} ({@link FpgaDraCommand}).
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(
        PluginCli.execute(new FpgaDraCommand(), FpgaDraCommand.defaults(System.getenv()), args));
  }

  /**
   * Runs the driver of these settings until SIGTERM.
   *
   * @param config the settings
   */
  public static void run(FpgaDraConfig config) {
    // tag::main[]
    DraPluginHost.Builder host =
        builder(config).host().pluginDir(config.pluginDir()).registryDir(config.registryDir());
    config.podUid().ifPresent(host::rollingUpdate);
    host.run();
    // end::main[]
  }

  /**
   * The driver of every FPGA port under the configured root, not yet built: the caller may set the
   * Kubernetes client (default: in-cluster) and more.
   *
   * @param config the settings
   * @return the driver's builder
   */
  public static BackendDriver.Builder builder(FpgaDraConfig config) {
    Objects.requireNonNull(config, "config");
    // tag::builder[]
    FpgaCards cards = new FpgaCards(FpgaBackend.everyPort(config.backendConfig()));
    return BackendDriver.builder(config.driverName(), cards)
        .nodeName(config.nodeName())
        .cdiDirectory(config.cdiDir())
        .cdiKind(config.driverName(), CDI_CLASS)
        .mapping(mapping(cards));
    // end::builder[]
  }

  /**
   * How a port or card becomes a DRA device: its NUMA node comes from the device itself; the IDs
   * and the PCI address from the backend's last scan of the port; {@value #KIND} tells a card from
   * a port.
   *
   * @param cards the backend the devices come from
   * @return the mapping
   */
  // tag::mapping[]
  public static BackendDevices mapping(FpgaCards cards) {
    return BackendDevices.builder()
        .attributes(
            device -> {
              Map<String, Object> attributes = new LinkedHashMap<>();
              Optional<String> card = FpgaCards.cardAddress(device);
              attributes.put(KIND, card.isPresent() ? "card" : "port");
              card.ifPresent(a -> attributes.put(PCI_ADDRESS, a));
              cards
                  .ports()
                  .port(device.id())
                  .ifPresent(
                      port -> {
                        attributes.put(AFU_ID, port.afuId());
                        attributes.put(REGION, port.region());
                        port.interfaceId().ifPresent(id -> attributes.put(INTERFACE_ID, id));
                        port.pciAddress().ifPresent(a -> attributes.put(PCI_ADDRESS, a));
                      });
              return attributes;
            })
        .build();
  }

  // end::mapping[]
}
