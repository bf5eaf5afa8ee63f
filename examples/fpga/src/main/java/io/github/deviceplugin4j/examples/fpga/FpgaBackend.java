package io.github.deviceplugin4j.examples.fpga;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.PreStartHook;
import io.github.deviceplugin4j.examples.common.HealthLog;
import io.github.deviceplugin4j.examples.common.SysfsBackend;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One FPGA resource: the ports whose accelerator function ID ({@code af} mode) or region interface
 * ID ({@code region} mode) equals this backend's, one device per port.
 *
 * <p>Each device gives the container its port's device node ({@code /dev/dfl-port.N}, read-write)
 * and the variable {@code DFL_PORTS} listing the container's ports; its NUMA node is the card's. A
 * port is unhealthy while its firmware has crashed ({@code afu_id} all f's), its {@code
 * errors/errors} is not zero, or its device node is missing. Sysfs is read again every {@link
 * FpgaConfig#pollInterval()} and on {@link #rescan()}; resource name, poll interval, rescan and the
 * problem log come from {@link SysfsBackend} (module {@code examples/common}).
 *
 * <p>As a {@link PreStartHook}, it checks again, right before each container starts, that every
 * port of the container is healthy, and fails the start with the reason and the fix otherwise.
 *
 * <pre>{@code
 * FpgaConfig config = FpgaConfig.defaults(Path.of("/"));
 * DevicePluginHost.Builder host = DevicePluginHost.builder();
 * FpgaBackend.discover(config).forEach(host::backend);
 * host.run();
 * }</pre>
 */
public final class FpgaBackend extends SysfsBackend implements PreStartHook {
  private static final Logger log = LoggerFactory.getLogger(FpgaBackend.class);

  private final FpgaConfig config;
  private final String functionId;
  private final DflScanner scanner;
  // The ports of this resource (seen since they joined it) and their last health.
  private final HealthLog members;
  private volatile Map<String, DflPort> lastScan = Map.of();

  /**
   * A backend for the ports of one function or interface ID.
   *
   * @param config the plugin's settings
   * @param functionId an AFU ID ({@code af} mode) or region interface ID ({@code region} mode), 32
   *     hex digits
   */
  public FpgaBackend(FpgaConfig config, String functionId) {
    this(
        Objects.requireNonNull(config, "config")
            .resourceName(Objects.requireNonNull(functionId, "functionId")),
        config,
        functionId);
  }

  private FpgaBackend(String resourceName, FpgaConfig config, String functionId) {
    super(log, resourceName, config.pollInterval());
    this.config = config;
    this.functionId = functionId;
    this.scanner = new DflScanner(config.root());
    this.members = new HealthLog(log, resourceName());
  }

  /**
   * One backend for every port, whatever accelerator or interface it holds: the shape a DRA driver
   * wants (the FpgaDraDriver of examples/fpga-dra), where one pool lists every device and a claim
   * picks ports by their {@code afuId} or {@code interfaceId} attribute instead of by resource
   * name. A port whose firmware crashed stays in the list, unhealthy. Its resource name is {@code
   * <domain>/port}.
   *
   * @param config the settings (the mode is not used)
   * @return the backend
   */
  public static FpgaBackend everyPort(FpgaConfig config) {
    Objects.requireNonNull(config, "config");
    return new FpgaBackend(config.domain() + "/port", config, null);
  }

  /**
   * One backend per function ID (or interface ID) present now. A function that appears later (a
   * port reprogrammed with a new accelerator) is advertised after a restart of the plugin.
   *
   * @param config the plugin's settings
   * @return the backends, sorted by resource name; empty when no port is found
   */
  public static List<FpgaBackend> discover(FpgaConfig config) {
    DflScanner.Scan scan = new DflScanner(config.root()).scan();
    scan.problems().forEach(p -> log.warn("discovery: {}", p));
    Set<String> ids = new LinkedHashSet<>();
    for (DflPort port : scan.ports()) {
      if (DflPort.CRASHED_AFU_ID.equals(port.afuId())) {
        log.warn(
            "discovery: {} has crashed firmware; it joins no resource until repaired", port.name());
        continue;
      }
      key(config.mode(), port).ifPresent(ids::add);
    }
    List<FpgaBackend> backends = new ArrayList<>();
    ids.stream().sorted().forEach(id -> backends.add(new FpgaBackend(config, id)));
    backends.forEach(b -> log.info("discovery: resource {}", b.resourceName()));
    return backends;
  }

  /**
   * The function or interface ID this resource stands for.
   *
   * @return 32 hex digits, or null for a backend made by {@link #everyPort(FpgaConfig)}
   */
  public String functionId() {
    return functionId;
  }

  /**
   * A port of the last scan, for what a device does not carry (its IDs and PCI address).
   *
   * @param name the port's name, which is its device ID, e.g. {@code dfl-port.0}
   * @return the port as last read, or empty when the last scan did not list it
   */
  public Optional<DflPort> port(String name) {
    return Optional.ofNullable(lastScan.get(name));
  }

  @Override
  public List<Device> devices() {
    DflScanner.Scan scan = scanner.scan();
    reportProblems(scan.problems());
    Map<String, DflPort> byName = new HashMap<>();
    scan.ports().forEach(p -> byName.put(p.name(), p));
    lastScan = Map.copyOf(byName);
    List<Device> devices = new ArrayList<>();
    for (DflPort port : scan.ports()) {
      boolean mine = functionId == null || functionId.equals(key(config.mode(), port).orElse(null));
      boolean crashedMember =
          members.knows(port.name()) && DflPort.CRASHED_AFU_ID.equals(port.afuId());
      if (mine || crashedMember) {
        members.update(port.name(), port.unhealthyReason());
        devices.add(toDevice(port));
      } else if (members.forget(port.name())) {
        log.info(
            "{}: {} now holds {} {}; it leaves this resource (restart the plugin to advertise a new"
                + " function)",
            resourceName(),
            port.name(),
            config.mode() == FpgaConfig.Mode.AF ? "accelerator" : "interface",
            key(config.mode(), port).orElse("<none>"));
      }
    }
    return devices;
  }

  private static Device toDevice(DflPort port) {
    Device.Builder b =
        Device.builder(port.name())
            .health(Health.of(port.healthy()))
            .deviceNode(DeviceNode.rw(port.devNode()))
            .env("DFL_PORTS", port.name());
    port.numaNode().ifPresent(b::numaNode);
    return b.build();
  }

  /**
   * Reads the container's ports again and refuses to start it on a port that turned bad since the
   * allocation. A vendor would reset the port here ({@code DFL_FPGA_PORT_RESET} ioctl) or load a
   * bitstream.
   */
  @Override
  public void preStart(List<Device> devices) {
    DflScanner.Scan scan = scanner.scan();
    List<String> reasons = new ArrayList<>();
    for (Device device : devices) {
      Optional<DflPort> port =
          scan.ports().stream().filter(p -> p.name().equals(device.id())).findFirst();
      if (port.isEmpty()) {
        reasons.add(device.id() + " is no longer in sysfs");
      } else {
        port.get().unhealthyReason().ifPresent(reasons::add);
      }
    }
    if (!reasons.isEmpty()) {
      throw new IllegalStateException(
          "FPGA port not ready for the container: " + String.join("; ", reasons));
    }
    log.info(
        "{}: pre-start check passed for {}",
        resourceName(),
        devices.stream().map(Device::id).toList());
  }

  private static Optional<String> key(FpgaConfig.Mode mode, DflPort port) {
    return mode == FpgaConfig.Mode.AF ? Optional.of(port.afuId()) : port.interfaceId();
  }
}
