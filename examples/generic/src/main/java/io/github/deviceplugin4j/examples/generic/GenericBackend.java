package io.github.deviceplugin4j.examples.generic;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.Mount;
import io.github.deviceplugin4j.examples.common.Sysfs;
import io.github.deviceplugin4j.examples.common.SysfsBackend;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Group;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Pci;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Resource;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Usb;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One resource of the generic plugin: the devices its groups find under a root directory ({@code /}
 * on a node, a generated tree in tests) that holds {@code sys/} and {@code dev/}.
 *
 * <ul>
 *   <li>{@code paths}: every node under {@code dev/} matching a glob is a device, its ID the path
 *       under {@code /dev} with {@code /} as {@code _} ({@code ttyUSB0}, {@code snd_controlC0});
 *   <li>{@code usb}: every {@code sys/bus/usb/devices/<port>} whose {@code idVendor}, {@code
 *       idProduct} (and {@code serial}) match is a device, ID {@code usb-<port>}, its node {@code
 *       /dev/bus/usb/<busnum>/<devnum>};
 *   <li>{@code pci}: every {@code sys/bus/pci/devices/<address>} whose {@code vendor}, {@code
 *       device} and {@code class} match is a device, ID its PCI address, with its NUMA node and the
 *       variable {@code PCI_DEVICES} (its addresses).
 * </ul>
 *
 * <p>A device is unhealthy while one of its nodes is missing under {@code dev/} or its sysfs
 * attributes cannot be read. The resource's configuration can be replaced while it serves ({@link
 * #update(Resource)}): the next scan uses it, the registration stays.
 */
public final class GenericBackend extends SysfsBackend {
  private static final Logger log = LoggerFactory.getLogger(GenericBackend.class);
  private static final Pattern USB_PORT = Pattern.compile("\\d+-[\\d.]+");
  private static final Pattern PCI = Sysfs.PCI_ADDRESS;

  /** Fact of a {@code paths} device: its node, e.g. {@code /dev/ttyUSB0}. */
  public static final String PATH = "path";

  /** Fact of a USB or PCI device: the vendor ID from sysfs, 4 lowercase hex digits. */
  public static final String VENDOR = "vendor";

  /** Fact of a USB device: {@code idProduct}, 4 lowercase hex digits. */
  public static final String PRODUCT = "product";

  /** Fact of a USB device that has one: its serial number. */
  public static final String SERIAL = "serial";

  /** Fact of a USB device: its port in sysfs, e.g. {@code 1-2}. */
  public static final String USB_PORT_FACT = "usbPort";

  /** Fact of a PCI device: the device ID from sysfs, 4 lowercase hex digits. */
  public static final String DEVICE = "device";

  /** Fact of a PCI device: its class from sysfs, 6 lowercase hex digits, e.g. {@code 020000}. */
  public static final String PCI_CLASS = "pciClass";

  /** Fact of a PCI device: its address, e.g. {@code 0000:17:00.0}. */
  public static final String PCI_ADDRESS = "pciAddress";

  private final Path root;
  private volatile Resource resource;
  private volatile Map<String, Map<String, String>> facts = Map.of();

  /**
   * A backend for one resource.
   *
   * @param resource the resource's configuration
   * @param root the directory holding {@code sys/} and {@code dev/}
   * @param pollInterval how often the tree is read again
   */
  public GenericBackend(Resource resource, Path root, Duration pollInterval) {
    super(log, Objects.requireNonNull(resource, "resource").name(), pollInterval);
    this.resource = resource;
    this.root = Objects.requireNonNull(root, "root");
  }

  /**
   * The configuration in use.
   *
   * @return the resource
   */
  public Resource resource() {
    return resource;
  }

  /**
   * Uses another configuration of the same resource from the next scan on, and scans now.
   *
   * @param next the new configuration; same name and sharing
   */
  public void update(Resource next) {
    if (!next.name().equals(resource.name()) || !next.sharing().equals(resource.sharing())) {
      throw new IllegalArgumentException(
          "update keeps the name and sharing of " + resource.name() + "; start a new backend");
    }
    this.resource = next;
    rescan();
  }

  @Override
  public List<Device> devices() {
    Resource r = resource;
    List<String> problems = new ArrayList<>();
    Map<String, Device> devices = new TreeMap<>();
    Map<String, Map<String, String>> found = new TreeMap<>();
    for (int i = 0; i < r.groups().size(); i++) {
      Group g = r.groups().get(i);
      Map<String, Map<String, String>> groupFacts = new TreeMap<>();
      for (Device d : scan(g, groupFacts, problems)) {
        if (devices.putIfAbsent(d.id(), d) != null) {
          problems.add("device " + d.id() + " matches more than one group; the first one is used");
        } else {
          found.put(d.id(), Map.copyOf(groupFacts.getOrDefault(d.id(), Map.of())));
        }
      }
    }
    facts = Collections.unmodifiableMap(found);
    reportProblems(problems);
    return List.copyOf(devices.values());
  }

  /**
   * What the last scan read about a device from sysfs: {@link #PATH} for a {@code paths} device;
   * {@link #VENDOR}, {@link #PRODUCT}, {@link #SERIAL} (when it has one) and {@link #USB_PORT_FACT}
   * for a USB device; {@link #VENDOR}, {@link #DEVICE}, {@link #PCI_CLASS} and {@link #PCI_ADDRESS}
   * for a PCI device (its NUMA node is on the device itself). The DRA driver publishes these as
   * attributes.
   *
   * @param id a device ID of the last {@link #devices()}
   * @return the facts by name; empty for an unknown ID or a value sysfs did not give
   */
  public Map<String, String> facts(String id) {
    return facts.getOrDefault(id, Map.of());
  }

  private List<Device> scan(
      Group g, Map<String, Map<String, String>> facts, List<String> problems) {
    return switch (g.kind()) {
      case PATHS -> paths(g, facts, problems);
      case USB -> usb(g, facts, problems);
      case PCI -> pci(g, facts, problems);
    };
  }

  // --- paths ------------------------------------------------------------------------------------

  private List<Device> paths(
      Group g, Map<String, Map<String, String>> facts, List<String> problems) {
    List<Device> out = new ArrayList<>();
    for (String glob : g.paths()) {
      for (String node : glob(glob, problems)) {
        String id = node.substring("/dev/".length()).replace('/', '_');
        facts.putIfAbsent(id, Map.of(PATH, node));
        out.add(device(id, g, List.of(node), Optional.empty(), Map.of(), problems));
      }
    }
    return out;
  }

  /** The absolute paths (as on the node) of the files under the root matching a glob, sorted. */
  private List<String> glob(String glob, List<String> problems) {
    String relative = glob.substring(1);
    String[] parts = relative.split("/");
    int fixed = 0;
    while (fixed < parts.length - 1 && !parts[fixed].matches(".*[*?\\[{].*")) {
      fixed++;
    }
    Path start = root.resolve(String.join("/", java.util.Arrays.copyOf(parts, fixed)));
    if (!Files.isDirectory(start)) {
      return List.of();
    }
    PathMatcher matcher = root.getFileSystem().getPathMatcher("glob:" + relative);
    try (Stream<Path> files = Files.walk(start, parts.length - fixed)) {
      return files
          .filter(p -> !Files.isDirectory(p))
          .map(root::relativize)
          .filter(matcher::matches)
          .map(p -> "/" + p.toString().replace('\\', '/'))
          .sorted()
          .toList();
    } catch (IOException | UncheckedIOException e) {
      problems.add("cannot list " + start + " for " + glob + ": " + e.getMessage());
      return List.of();
    }
  }

  // --- USB --------------------------------------------------------------------------------------

  private List<Device> usb(Group g, Map<String, Map<String, String>> facts, List<String> problems) {
    List<Device> out = new ArrayList<>();
    for (Path dev : Sysfs.list(root.resolve("sys/bus/usb/devices"), USB_PORT)) {
      Optional<String> vendor = Sysfs.read(dev.resolve("idVendor")).map(GenericBackend::lower);
      Optional<String> product = Sysfs.read(dev.resolve("idProduct")).map(GenericBackend::lower);
      Optional<String> serial = Sysfs.read(dev.resolve("serial"));
      if (vendor.isEmpty() || product.isEmpty()) {
        continue;
      }
      boolean match = false;
      for (Usb u : g.usb()) {
        match |=
            u.vendor().equals(vendor.get())
                && u.product().equals(product.get())
                && (u.serial().isEmpty() || u.serial().equals(serial));
      }
      if (!match) {
        continue;
      }
      String port = dev.getFileName().toString();
      Map<String, String> usbFacts = new TreeMap<>();
      usbFacts.put(VENDOR, vendor.get());
      usbFacts.put(PRODUCT, product.get());
      serial.ifPresent(v -> usbFacts.put(SERIAL, v));
      usbFacts.put(USB_PORT_FACT, port);
      facts.put("usb-" + port, usbFacts);
      Optional<String> bus = Sysfs.read(dev.resolve("busnum"));
      Optional<String> num = Sysfs.read(dev.resolve("devnum"));
      String id = "usb-" + port;
      if (bus.isEmpty()
          || num.isEmpty()
          || !bus.get().matches("\\d+")
          || !num.get().matches("\\d+")) {
        out.add(unhealthy(id, g, "sysfs busnum/devnum of USB device " + port + " cannot be read"));
        continue;
      }
      String node =
          String.format(
              "/dev/bus/usb/%03d/%03d", Integer.parseInt(bus.get()), Integer.parseInt(num.get()));
      Map<String, String> env = Map.of("USB_DEVICES", port);
      out.add(device(id, g, List.of(node), Optional.empty(), env, problems));
    }
    return out;
  }

  // --- PCI --------------------------------------------------------------------------------------

  private List<Device> pci(Group g, Map<String, Map<String, String>> facts, List<String> problems) {
    List<Device> out = new ArrayList<>();
    for (Path dev : Sysfs.list(root.resolve("sys/bus/pci/devices"), PCI)) {
      Optional<String> vendor = Sysfs.read(dev.resolve("vendor")).map(GenericBackend::hex);
      Optional<String> device = Sysfs.read(dev.resolve("device")).map(GenericBackend::hex);
      Optional<String> pciClass = Sysfs.read(dev.resolve("class")).map(GenericBackend::hex);
      String address = dev.getFileName().toString();
      boolean match = false;
      for (Pci p : g.pci()) {
        match |=
            (p.vendor().isEmpty() || p.vendor().equals(vendor))
                && (p.device().isEmpty() || p.device().equals(device))
                && (p.pciClass().isEmpty()
                    || pciClass.map(c -> c.startsWith(p.pciClass().get())).orElse(false));
      }
      if (!match) {
        continue;
      }
      Map<String, String> pciFacts = new TreeMap<>();
      vendor.ifPresent(v -> pciFacts.put(VENDOR, v));
      device.ifPresent(v -> pciFacts.put(DEVICE, v));
      pciClass.ifPresent(v -> pciFacts.put(PCI_CLASS, v));
      pciFacts.put(PCI_ADDRESS, address);
      facts.put(address, pciFacts);
      Optional<Integer> numa = Optional.empty();
      var node = Sysfs.numaNode(dev, problems);
      if (node.isPresent()) {
        numa = Optional.of(node.getAsInt());
      }
      out.add(device(address, g, List.of(), numa, Map.of("PCI_DEVICES", address), problems));
    }
    return out;
  }

  // --- devices ----------------------------------------------------------------------------------

  private Device device(
      String id,
      Group g,
      List<String> ownNodes,
      Optional<Integer> numa,
      Map<String, String> ownEnv,
      List<String> problems) {
    Device.Builder b = Device.builder(id);
    List<String> nodes = new ArrayList<>(ownNodes);
    nodes.addAll(g.deviceNodes());
    List<String> missing = new ArrayList<>();
    for (String n : nodes) {
      b.deviceNode(new DeviceNode(n, n, g.permissions()));
      if (!Files.exists(root.resolve(n.substring(1)))) {
        missing.add(n);
      }
    }
    g.mounts().forEach(m -> b.mount(new Mount(m.containerPath(), m.hostPath(), m.readOnly())));
    g.env().forEach(b::env);
    ownEnv.forEach(b::env);
    g.cdi().forEach(b::cdiDevice);
    numa.ifPresent(b::numaNode);
    if (!missing.isEmpty()) {
      b.health(Health.UNHEALTHY, "device node missing: " + String.join(", ", missing));
    }
    return b.build();
  }

  private static Device unhealthy(String id, Group g, String reason) {
    Device.Builder b = Device.builder(id).health(Health.UNHEALTHY, reason);
    g.env().forEach(b::env);
    return b.build();
  }

  private static String lower(String v) {
    return v.trim().toLowerCase(Locale.ROOT);
  }

  /** A sysfs hex value without {@code 0x}: {@code 0x8086} is {@code 8086}. */
  private static String hex(String v) {
    String l = lower(v);
    return l.startsWith("0x") ? l.substring(2) : l;
  }
}
