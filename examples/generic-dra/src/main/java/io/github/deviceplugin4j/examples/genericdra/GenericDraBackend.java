package io.github.deviceplugin4j.examples.genericdra;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.Sharing;
import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.examples.common.SysfsBackend;
import io.github.deviceplugin4j.examples.generic.GenericBackend;
import io.github.deviceplugin4j.examples.generic.GenericConfig;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Resource;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every device of every resource of a generic configuration, as one backend for one DRA driver.
 * Each resource's devices are found as the device plugin finds them ({@link GenericBackend}); a
 * device's ID is the resource's short name, {@code -}, and its device plugin ID ({@code
 * serial-ttyUSB0}, {@code yubikey-usb-1-2}, {@code nic-0000:17:00.0}), so the same node matched by
 * two resources is two DRA devices. Its attributes ({@link #mapping()}): {@value #RESOURCE} (the
 * full resource name) and the facts the scan read from sysfs ({@link GenericBackend#facts}).
 *
 * <p>A resource's sharing ({@code count}, {@code renamed}, {@code oneReplicaPerContainer}, {@code
 * packed}) has no meaning here: a DRA device is published once, and pods share it by sharing one
 * ResourceClaim. Such keys are ignored with a warning naming them, so one file serves both modes.
 */
public final class GenericDraBackend extends SysfsBackend {
  private static final Logger log = LoggerFactory.getLogger(GenericDraBackend.class);

  /** The attribute holding the device's resource name, e.g. {@code generic.example.com/serial}. */
  public static final String RESOURCE = "resource";

  private final Path root;
  private volatile List<GenericBackend> resources = List.of();

  /** A device published: its resource's backend and its ID there. */
  private record Origin(GenericBackend backend, String id) {}

  private volatile Map<String, Origin> origins = Map.of();

  /**
   * A backend with no resources yet; {@link #apply(GenericConfig)} gives it some.
   *
   * @param driverName the DRA driver's name, for the backend's resource name
   * @param root the directory holding {@code sys/} and {@code dev/}
   * @param pollInterval how often the tree is read again
   */
  public GenericDraBackend(String driverName, Path root, Duration pollInterval) {
    super(log, driverName + "/generic", pollInterval);
    this.root = Objects.requireNonNull(root, "root");
  }

  /**
   * Serves the resources of a configuration from the next scan on, and scans now: the driver
   * publishes its slices again.
   *
   * @param config the configuration
   */
  public void apply(GenericConfig config) {
    List<GenericBackend> next = new ArrayList<>();
    Map<String, String> shortNames = new LinkedHashMap<>();
    for (int i = 0; i < config.resources().size(); i++) {
      Resource r = config.resources().get(i);
      String shortName = shortName(r.name());
      String other = shortNames.putIfAbsent(shortName, r.name());
      if (other != null) {
        throw new IllegalArgumentException(
            "resources["
                + i
                + "].name: "
                + r.name()
                + " and "
                + other
                + " give their DRA devices the same prefix '"
                + shortName
                + "'; under --dra the names after the domain must differ");
      }
      if (!r.sharing().equals(Sharing.none())) {
        log.warn(
            "resources[{}] ({}): count, renamed, oneReplicaPerContainer and packed are ignored"
                + " under --dra: each device is published once; pods share a device by sharing"
                + " one ResourceClaim",
            i,
            r.name());
      }
      next.add(new GenericBackend(r, root, pollInterval()));
    }
    resources = List.copyOf(next);
    rescan();
  }

  @Override
  public List<Device> devices() {
    Map<String, Device> out = new TreeMap<>();
    Map<String, Origin> found = new TreeMap<>();
    List<String> problems = new ArrayList<>();
    for (GenericBackend b : resources) {
      String prefix = shortName(b.resourceName()) + "-";
      for (Device d : b.devices()) {
        String id = prefix + d.id();
        out.put(id, new Device(id, d.health(), d.numaNodes(), d.allocation(), d.unhealthyReason()));
        found.put(id, new Origin(b, d.id()));
      }
      b.problems().forEach(p -> problems.add(b.resourceName() + ": " + p));
    }
    origins = found;
    reportProblems(problems);
    return List.copyOf(out.values());
  }

  /**
   * The attributes of a device of the last {@link #devices()}: its resource and its sysfs facts. A
   * serial number longer than the DRA API allows ({@value
   * BackendDevices#MAX_ATTRIBUTE_VALUE_LENGTH} characters) is left out, so the device is still
   * published.
   *
   * @param device a device of the last list
   * @return the attributes by name
   */
  public Map<String, Object> attributes(Device device) {
    Origin o = origins.get(device.id());
    if (o == null) {
      return Map.of();
    }
    Map<String, Object> attributes = new TreeMap<>();
    attributes.put(RESOURCE, o.backend().resourceName());
    o.backend()
        .facts(o.id())
        .forEach(
            (k, v) -> {
              if (v.length() <= BackendDevices.MAX_ATTRIBUTE_VALUE_LENGTH) {
                attributes.put(k, v);
              }
            });
    return attributes;
  }

  /**
   * How the devices become DRA devices: with {@link #attributes(Device)} (and the NUMA node the SDK
   * adds).
   *
   * @return the mapping
   */
  public BackendDevices mapping() {
    return BackendDevices.builder().attributes(this::attributes).build();
  }

  /** The part of a resource name after its domain: {@code serial} for {@code x.com/serial}. */
  static String shortName(String resourceName) {
    return resourceName.substring(resourceName.indexOf('/') + 1);
  }
}
