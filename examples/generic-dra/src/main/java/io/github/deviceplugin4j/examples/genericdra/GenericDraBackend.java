package io.github.deviceplugin4j.examples.genericdra;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyBuilder;
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
 * <p>A resource's {@code count: n} becomes consumable capacity (KEP-5075, {@code
 * DRAConsumableCapacity}): its devices are published with {@code allowMultipleAllocations} and a
 * capacity {@value #SHARES} of {@code n}, of which each claim takes 1 unless it asks for more
 * (request policy: default 1, any whole number from 1 to {@code n}). So up to {@code n} claims get
 * one device at once, as {@code n} pods got its replicas from the device plugin; the scheduler does
 * the counting. {@code renamed}, {@code oneReplicaPerContainer} and {@code packed} have no meaning
 * for a claim and are ignored with a warning naming them, so one file serves both modes.
 */
public final class GenericDraBackend extends SysfsBackend {
  private static final Logger log = LoggerFactory.getLogger(GenericDraBackend.class);

  /** The capacity of a shared device ({@code count} above 1): how many claims may share it. */
  public static final String SHARES = "shares";

  /** The attribute holding the device's resource name, e.g. {@code generic.example.com/serial}. */
  public static final String RESOURCE = "resource";

  private final Path root;
  private volatile List<GenericBackend> resources = List.of();
  private volatile Map<GenericBackend, Integer> shares = Map.of();

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
    Map<GenericBackend, Integer> nextShares = new java.util.IdentityHashMap<>();
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
      Sharing sharing = r.sharing();
      if (sharing.isRenamed() || sharing.isOneReplicaPerContainer() || sharing.isPacked()) {
        log.warn(
            "resources[{}] ({}): renamed, oneReplicaPerContainer and packed are ignored under"
                + " --dra; count becomes the device's '{}' capacity that claims share",
            i,
            r.name(),
            SHARES);
      }
      GenericBackend backend = new GenericBackend(r, root, pollInterval());
      next.add(backend);
      nextShares.put(backend, sharing.replicas());
    }
    shares = nextShares;
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
    return BackendDevices.builder()
        .attributes(this::attributes)
        .capacities(
            d -> {
              int n = shares(d);
              return n > 1 ? Map.of(SHARES, String.valueOf(n)) : Map.of();
            })
        .allowMultipleAllocations(d -> shares(d) > 1)
        .capacityPolicies(
            d ->
                Map.of(
                    SHARES,
                    new CapacityRequestPolicyBuilder()
                        .withDefault(new Quantity("1"))
                        .withNewValidRange()
                        .withMin(new Quantity("1"))
                        .withMax(new Quantity(String.valueOf(shares(d))))
                        .withStep(new Quantity("1"))
                        .endValidRange()
                        .build()))
        .build();
  }

  /**
   * How many claims may share a device of the last {@link #devices()}: its resource's {@code
   * count}.
   *
   * @param device a device of the last list
   * @return 1 for a device that is not shared
   */
  public int shares(Device device) {
    Origin o = origins.get(device.id());
    return o == null ? 1 : shares.getOrDefault(o.backend(), 1);
  }

  /** The part of a resource name after its domain: {@code serial} for {@code x.com/serial}. */
  static String shortName(String resourceName) {
    return resourceName.substring(resourceName.indexOf('/') + 1);
  }
}
