package io.github.deviceplugin4j.dra;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumptionBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.github.deviceplugin4j.core.Device;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Turns the devices a {@code DeviceBackend} reports into the devices a DRA driver publishes in its
 * ResourceSlices: a device name, attributes and capacities.
 *
 * <p>The DRA device name is derived from the device ID alone, so it is the same on every run: an ID
 * that is already a DNS label (lowercase letters, digits and {@code -}, at most 63 characters) is
 * used as it is; any other ID is lowercased, every other character becomes {@code -}, and a short
 * hash of the original ID is appended ({@code GPU_0} becomes {@code gpu-0-} plus 8 hex digits), so
 * two IDs that differ only in case or punctuation never share a name. See {@link
 * #deviceName(String)}.
 *
 * <p>Attributes: {@value #NUMA_NODE_ATTRIBUTE} (an int) when the device is attached to exactly one
 * NUMA node, plus whatever the vendor's function returns for the device. Values may be {@link
 * Boolean}, {@link Integer}, {@link Long}, {@link String}, or a fabric8 {@link DeviceAttribute}
 * (for a semantic version, say). Capacities are quantities such as {@code "16Gi"}.
 *
 * <pre>{@code
 * BackendDevices mapping = BackendDevices.builder()
 *     .attributes(d -> Map.of("model", "agilex7", "pciAddress", pciAddressOf(d)))
 *     .capacities(d -> Map.of("memory", "16Gi"))
 *     .build();
 * BackendDevices.Mapping published = mapping.map(backend.devices());
 * publisher.publish(published.draDevices());
 * }</pre>
 *
 * <p>Health: by default an unhealthy device is left out. With {@link Builder#healthTaint(String,
 * TaintEffect)} (which {@link BackendDriver} sets to {@code <driver>/unhealthy} and {@code
 * NoSchedule} unless told otherwise) it stays in the slice with a taint whose value is the
 * backend's reason made a label value ({@link #taintValue(String)}), so the scheduler keeps new
 * claims off it ({@code NoSchedule}) or also evicts the pods using it ({@code NoExecute}).
 *
 * <p>Sharing: {@link Builder#allowMultipleAllocations(Predicate)} lets several claims share a
 * device (consumable capacity), and {@link Builder#capacityPolicies(Function)} says how much of
 * each capacity a claim takes. {@link Builder#bindingConditions(Function)} declares the conditions
 * the scheduler waits for before it binds a pod (the device is published with {@code bindsToNode}).
 *
 * <p>Devices the DRA API would refuse (a bad attribute name or value, too many attributes, a
 * repeated ID or name) are left out of the mapping and each is named in {@link Mapping#problems()};
 * the others are published.
 */
public final class BackendDevices {

  /** The attribute that carries the device's NUMA node, when it has exactly one. */
  public static final String NUMA_NODE_ATTRIBUTE = "numaNode";

  /** The longest DRA device name: a DNS label. */
  public static final int MAX_NAME_LENGTH = 63;

  /** The most attributes and capacities together that one device may have (resource.k8s.io/v1). */
  public static final int MAX_ATTRIBUTES_AND_CAPACITIES =
      io.github.deviceplugin4j.dra.slices.SliceValidation.MAX_ATTRIBUTES_AND_CAPACITIES;

  /** The longest string or version attribute value (resource.k8s.io/v1). */
  public static final int MAX_ATTRIBUTE_VALUE_LENGTH =
      io.github.deviceplugin4j.dra.slices.SliceValidation.MAX_ATTRIBUTE_VALUE_LENGTH;

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final int HASH_LENGTH = 8;

  private final Function<Device, Map<String, ?>> attributes;
  private final Function<Device, Map<String, String>> capacities;
  private final boolean includeUnhealthy;
  private final String taintKey;
  private final TaintEffect taintEffect;
  private final Predicate<Device> multipleAllocations;
  private final Function<Device, Map<String, CapacityRequestPolicy>> capacityPolicies;
  private final Function<Device, BindingConditions> bindingConditions;

  private BackendDevices(Builder builder) {
    this.attributes = builder.attributes;
    this.capacities = builder.capacities;
    this.includeUnhealthy = builder.includeUnhealthy;
    this.taintKey = builder.taintKey;
    this.taintEffect = builder.taintEffect;
    this.multipleAllocations = builder.multipleAllocations;
    this.capacityPolicies = builder.capacityPolicies;
    this.bindingConditions = builder.bindingConditions;
  }

  private BackendDevices(BackendDevices base, String taintKey, TaintEffect taintEffect) {
    this.attributes = base.attributes;
    this.capacities = base.capacities;
    this.includeUnhealthy = base.includeUnhealthy;
    this.taintKey = taintKey;
    this.taintEffect = taintEffect;
    this.multipleAllocations = base.multipleAllocations;
    this.capacityPolicies = base.capacityPolicies;
    this.bindingConditions = base.bindingConditions;
  }

  /**
   * What a taint does to the claims and pods that do not tolerate it (upstream's {@code
   * DeviceTaintEffect}).
   */
  public enum TaintEffect {
    /** New claims are not allocated the device; pods already using it keep running. */
    NO_SCHEDULE("NoSchedule"),
    /** Like {@link #NO_SCHEDULE}, and pods using the device are evicted. */
    NO_EXECUTE("NoExecute");

    private final String apiValue;

    TaintEffect(String apiValue) {
      this.apiValue = apiValue;
    }

    /**
     * The value in the API.
     *
     * @return {@code NoSchedule} or {@code NoExecute}
     */
    public String apiValue() {
      return apiValue;
    }
  }

  /**
   * The conditions the scheduler waits for before binding a pod to a device's node (KEP-5007): all
   * of {@code conditions} True on the claim's device status, or binding fails when any of {@code
   * failureConditions} is True. Each is a condition type (a label name); at most 4 of each, and
   * both lists set together.
   *
   * @param conditions the binding conditions
   * @param failureConditions the binding failure conditions
   */
  public record BindingConditions(List<String> conditions, List<String> failureConditions) {
    /**
     * Copies the lists.
     *
     * @param conditions the binding conditions
     * @param failureConditions the binding failure conditions
     */
    public BindingConditions {
      conditions = List.copyOf(conditions);
      failureConditions = List.copyOf(failureConditions);
    }

    /**
     * One binding condition and one failure condition.
     *
     * @param condition set True when the device is attached
     * @param failureCondition set True when attaching failed
     * @return the conditions
     */
    public static BindingConditions of(String condition, String failureCondition) {
      return new BindingConditions(List.of(condition), List.of(failureCondition));
    }
  }

  /** This mapping with a health taint, unless it has one already. */
  BackendDevices withDefaultHealthTaint(String key, TaintEffect effect) {
    if (taintKey != null || key == null) {
      return this;
    }
    return new BackendDevices(this, key, effect);
  }

  /** The binding conditions of a device, or null. */
  BindingConditions bindingConditionsOf(Device device) {
    return bindingConditions.apply(device);
  }

  /** The health taint's key, or null when unhealthy devices are left out. */
  String healthTaintKey() {
    return taintKey;
  }

  /**
   * An unhealthy reason made a valid taint (label) value: characters other than letters, digits,
   * {@code -}, {@code _} and {@code .} become {@code -}, runs of them collapse, it starts and ends
   * with a letter or digit and is at most 63 characters.
   *
   * @param reason the backend's reason; may be empty
   * @return the value, possibly empty
   */
  public static String taintValue(String reason) {
    if (reason == null) {
      return "";
    }
    StringBuilder b = new StringBuilder();
    for (char c : reason.toCharArray()) {
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '-'
              || c == '_'
              || c == '.';
      b.append(ok ? c : '-');
    }
    String v = b.toString().replaceAll("-{2,}", "-");
    v = v.replaceAll("^[^A-Za-z0-9]+", "");
    if (v.length() > 63) {
      v = v.substring(0, 63);
    }
    return v.replaceAll("[^A-Za-z0-9]+$", "");
  }

  /**
   * A mapping with no vendor attributes or capacities that leaves unhealthy devices out.
   *
   * @return the default mapping
   */
  public static BackendDevices defaults() {
    return builder().build();
  }

  /**
   * A builder for a mapping.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The DRA device name of a device ID; the same ID always gives the same name.
   *
   * @param id a backend device ID
   * @return the ID itself when it is a DNS label, otherwise a sanitised name with a hash suffix
   * @throws IllegalArgumentException if the ID is empty
   */
  public static String deviceName(String id) {
    Objects.requireNonNull(id, "id");
    if (id.isEmpty()) {
      throw new IllegalArgumentException("device ID is empty: a DRA device needs a name");
    }
    if (id.length() <= MAX_NAME_LENGTH && DNS_LABEL.matcher(id).matches()) {
      return id;
    }
    StringBuilder sanitised = new StringBuilder();
    for (char c : id.toLowerCase(java.util.Locale.ROOT).toCharArray()) {
      boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      sanitised.append(ok ? c : '-');
    }
    String base = sanitised.toString().replaceAll("-+", "-").replaceAll("^-|-$", "");
    int room = MAX_NAME_LENGTH - HASH_LENGTH - 1;
    if (base.length() > room) {
      base = base.substring(0, room).replaceAll("-$", "");
    }
    String hash = sha256Hex(id).substring(0, HASH_LENGTH);
    return base.isEmpty() ? "d-" + hash : base + "-" + hash;
  }

  /**
   * Maps a backend's device list to DRA devices, sorted by name.
   *
   * @param devices the backend's complete device list
   * @return the DRA devices, the backend device behind each name, and any devices left out
   */
  public Mapping map(List<Device> devices) {
    return map(devices, DevicePartitions.Partitions.none());
  }

  /**
   * Maps a backend's device list and its partitions (shared counters) to DRA devices and counter
   * sets.
   *
   * @param devices the backend's complete device list
   * @param partitions the counter sets and what each device consumes from them
   * @return the DRA devices and counter sets, the backend device behind each name, and any devices
   *     left out
   */
  public Mapping map(List<Device> devices, DevicePartitions.Partitions partitions) {
    Objects.requireNonNull(devices, "devices");
    Objects.requireNonNull(partitions, "partitions");
    List<String> problems = new ArrayList<>();
    Map<String, Device> byName = new TreeMap<>();
    Map<String, String> idOfName = new LinkedHashMap<>();
    Map<String, io.fabric8.kubernetes.api.model.resource.v1.Device> draByName = new TreeMap<>();
    java.util.Set<String> ids = new java.util.HashSet<>();
    for (Device device : devices) {
      if (!ids.add(device.id())) {
        problems.add("device ID '" + device.id() + "' appears twice: the second one is left out");
        continue;
      }
      if (!includeUnhealthy && taintKey == null && !device.isHealthy()) {
        continue;
      }
      String name;
      try {
        name = deviceName(device.id());
      } catch (IllegalArgumentException e) {
        problems.add(e.getMessage());
        continue;
      }
      if (idOfName.containsKey(name)) {
        problems.add(
            "device IDs '"
                + idOfName.get(name)
                + "' and '"
                + device.id()
                + "' both map to DRA device name '"
                + name
                + "': '"
                + device.id()
                + "' is left out; give the devices IDs that differ as DNS labels");
        continue;
      }
      try {
        draByName.put(name, toDra(name, device, partitions));
      } catch (IllegalArgumentException e) {
        problems.add("device '" + device.id() + "' is left out: " + e.getMessage());
        continue;
      } catch (RuntimeException e) {
        problems.add(
            "device '"
                + device.id()
                + "' is left out: the vendor's attributes or capacities function failed: "
                + e);
        continue;
      }
      idOfName.put(name, device.id());
      byName.put(name, device);
    }
    List<io.fabric8.kubernetes.api.model.resource.v1.CounterSet> sets = new ArrayList<>();
    for (DevicePartitions.CounterSet c : partitions.counterSets()) {
      try {
        Map<String, io.fabric8.kubernetes.api.model.resource.v1.Counter> counters = new TreeMap<>();
        c.counters()
            .forEach(
                (k, v) ->
                    counters.put(
                        k,
                        new io.fabric8.kubernetes.api.model.resource.v1.Counter(
                            quantity("counter " + k, v))));
        sets.add(new io.fabric8.kubernetes.api.model.resource.v1.CounterSet(counters, c.name()));
      } catch (IllegalArgumentException e) {
        problems.add("counter set '" + c.name() + "' is left out: " + e.getMessage());
      }
    }
    return new Mapping(new ArrayList<>(draByName.values()), byName, problems, sets);
  }

  private io.fabric8.kubernetes.api.model.resource.v1.Device toDra(
      String name, Device device, DevicePartitions.Partitions partitions) {
    Map<String, DeviceAttribute> attrs = new TreeMap<>();
    if (device.numaNodes().size() == 1) {
      attrs.put(
          NUMA_NODE_ATTRIBUTE,
          new DeviceAttributeBuilder().withInt(device.numaNodes().get(0).longValue()).build());
    }
    Map<String, ?> vendorAttributes = attributes.apply(device);
    if (vendorAttributes != null) {
      vendorAttributes.forEach(
          (key, value) -> {
            checkQualifiedName("attribute", key);
            attrs.put(key, attribute(key, value));
          });
    }
    Map<String, DeviceCapacity> caps = new TreeMap<>();
    Map<String, String> vendorCapacities = capacities.apply(device);
    boolean shared = multipleAllocations.test(device);
    Map<String, CapacityRequestPolicy> policies = shared ? capacityPolicies.apply(device) : null;
    if (vendorCapacities != null) {
      vendorCapacities.forEach(
          (key, value) -> {
            checkQualifiedName("capacity", key);
            caps.put(
                key,
                new DeviceCapacity(
                    policies == null ? null : policies.get(key), quantity(key, value)));
          });
    }
    if (attrs.size() + caps.size() > MAX_ATTRIBUTES_AND_CAPACITIES) {
      throw new IllegalArgumentException(
          (attrs.size() + caps.size())
              + " attributes and capacities, the DRA API allows at most "
              + MAX_ATTRIBUTES_AND_CAPACITIES
              + " per device");
    }
    DeviceBuilder builder = new DeviceBuilder().withName(name);
    if (!attrs.isEmpty()) {
      builder.withAttributes(attrs);
    }
    if (!caps.isEmpty()) {
      builder.withCapacity(caps);
    }
    if (shared) {
      builder.withAllowMultipleAllocations(true);
    }
    if (taintKey != null && !device.isHealthy()) {
      builder.withTaints(
          new DeviceTaint(
              taintEffect.apiValue(), taintKey, null, taintValue(device.unhealthyReason())));
    }
    BindingConditions binding = bindingConditions.apply(device);
    if (binding != null && !binding.conditions().isEmpty()) {
      builder
          .withBindsToNode(true)
          .withBindingConditions(binding.conditions())
          .withBindingFailureConditions(binding.failureConditions());
    }
    List<DevicePartitions.Consumption> consumes =
        partitions.consumption().getOrDefault(device.id(), List.of());
    for (DevicePartitions.Consumption c : consumes) {
      Map<String, io.fabric8.kubernetes.api.model.resource.v1.Counter> counters = new TreeMap<>();
      c.counters()
          .forEach(
              (k, v) ->
                  counters.put(
                      k,
                      new io.fabric8.kubernetes.api.model.resource.v1.Counter(
                          quantity("counter " + k, v))));
      builder.addToConsumesCounters(
          new DeviceCounterConsumptionBuilder()
              .withCounterSet(c.counterSet())
              .withCounters(counters)
              .build());
    }
    io.fabric8.kubernetes.api.model.resource.v1.Device built = builder.build();
    List<String> problems = io.github.deviceplugin4j.dra.slices.SliceValidation.device(built);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return built;
  }

  private static DeviceAttribute attribute(String key, Object value) {
    if (value instanceof DeviceAttribute given) {
      return given;
    }
    if (value instanceof Boolean b) {
      return new DeviceAttributeBuilder().withBool(b).build();
    }
    if (value instanceof Integer || value instanceof Long || value instanceof Short) {
      return new DeviceAttributeBuilder().withInt(((Number) value).longValue()).build();
    }
    if (value instanceof String s) {
      if (s.length() > MAX_ATTRIBUTE_VALUE_LENGTH) {
        throw new IllegalArgumentException(
            "attribute '"
                + key
                + "' is "
                + s.length()
                + " characters long, the DRA API allows at most "
                + MAX_ATTRIBUTE_VALUE_LENGTH);
      }
      return new DeviceAttributeBuilder().withString(s).build();
    }
    throw new IllegalArgumentException(
        "attribute '"
            + key
            + "' has a value of type "
            + (value == null ? "null" : value.getClass().getName())
            + "; use Boolean, Integer, Long, String or a fabric8 DeviceAttribute");
  }

  private static Quantity quantity(String key, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("capacity '" + key + "' has no value");
    }
    try {
      Quantity q = new Quantity(value);
      Quantity.getAmountInBytes(q);
      return q;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "capacity '" + key + "' is '" + value + "', not a quantity such as 16Gi or 4", e);
    }
  }

  /**
   * Checks an attribute or capacity name: a C identifier of at most 32 characters, optionally
   * prefixed by a DNS subdomain and {@code /}.
   */
  private static void checkQualifiedName(String what, String key) {
    Objects.requireNonNull(key, what + " name");
    boolean ok = io.github.deviceplugin4j.dra.slices.SliceValidation.isQualifiedName(key);
    if (!ok) {
      throw new IllegalArgumentException(
          what
              + " name '"
              + key
              + "' is invalid: use a C identifier of at most 32 characters, optionally after a"
              + " DNS domain and '/', e.g. 'model' or 'fpga.example.com/model'");
    }
  }

  private static String sha256Hex(String s) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  /**
   * The result of {@link #map(List)}.
   *
   * @param draDevices the DRA devices to publish, sorted by name
   * @param backendDevices the backend device behind each DRA device name
   * @param problems each device left out and why; empty when all were mapped
   * @param counterSets the shared counter sets of the pool (partitionable devices); often empty
   */
  public record Mapping(
      List<io.fabric8.kubernetes.api.model.resource.v1.Device> draDevices,
      Map<String, Device> backendDevices,
      List<String> problems,
      List<io.fabric8.kubernetes.api.model.resource.v1.CounterSet> counterSets) {

    /**
     * Makes unmodifiable copies.
     *
     * @param draDevices see {@link #draDevices()}
     * @param backendDevices see {@link #backendDevices()}
     * @param problems see {@link #problems()}
     * @param counterSets see {@link #counterSets()}
     */
    public Mapping {
      draDevices = List.copyOf(draDevices);
      backendDevices = Map.copyOf(backendDevices);
      problems = List.copyOf(problems);
      counterSets = List.copyOf(counterSets);
    }

    /**
     * A mapping without counter sets (as before partitionable devices).
     *
     * @param draDevices see {@link #draDevices()}
     * @param backendDevices see {@link #backendDevices()}
     * @param problems see {@link #problems()}
     */
    public Mapping(
        List<io.fabric8.kubernetes.api.model.resource.v1.Device> draDevices,
        Map<String, Device> backendDevices,
        List<String> problems) {
      this(draDevices, backendDevices, problems, List.of());
    }

    /**
     * The backend device published under a DRA device name.
     *
     * @param draName the DRA device name, as in an allocation result
     * @return the backend device, or empty when no device has that name
     */
    public Optional<Device> backendDevice(String draName) {
      return Optional.ofNullable(backendDevices.get(draName));
    }
  }

  /** Builds a {@link BackendDevices}; not thread-safe. */
  public static final class Builder {
    private Function<Device, Map<String, ?>> attributes = d -> Map.of();
    private Function<Device, Map<String, String>> capacities = d -> Map.of();
    private boolean includeUnhealthy;
    private String taintKey;
    private TaintEffect taintEffect = TaintEffect.NO_SCHEDULE;
    private Predicate<Device> multipleAllocations = d -> false;
    private Function<Device, Map<String, CapacityRequestPolicy>> capacityPolicies = d -> Map.of();
    private Function<Device, BindingConditions> bindingConditions = d -> null;

    private Builder() {}

    /**
     * Publishes unhealthy devices with a taint instead of leaving them out (KEP-5055, GA in
     * Kubernetes 1.37): key {@code key}, value the backend's reason ({@link #taintValue(String)}),
     * the given effect. Recovery removes the taint. {@link BackendDriver} sets {@code
     * <driver>/unhealthy} with {@code NoSchedule} when the mapping has none.
     *
     * @param key a label name, e.g. {@code fpga.example.com/unhealthy}
     * @param effect {@link TaintEffect#NO_SCHEDULE}, or {@link TaintEffect#NO_EXECUTE} to evict the
     *     pods using the device too
     * @return this builder
     */
    public Builder healthTaint(String key, TaintEffect effect) {
      Objects.requireNonNull(key, "key");
      if (!io.github.deviceplugin4j.dra.slices.SliceValidation.labelName(key)) {
        throw new IllegalArgumentException(
            "taint key '" + key + "' is not a label name: use e.g. fpga.example.com/unhealthy");
      }
      this.taintKey = key;
      this.taintEffect = Objects.requireNonNull(effect, "effect");
      return this;
    }

    /**
     * Which devices several claims may share at once (consumable capacity, KEP-5075): such a device
     * is published with {@code allowMultipleAllocations}, and each claim takes a share of its
     * capacities (see {@link #capacityPolicies(Function)}). Default: none.
     *
     * @param predicate true for a shareable device
     * @return this builder
     */
    public Builder allowMultipleAllocations(Predicate<Device> predicate) {
      this.multipleAllocations = Objects.requireNonNull(predicate, "predicate");
      return this;
    }

    /**
     * How much of each capacity of a shareable device one claim takes, by capacity name (fabric8's
     * {@code CapacityRequestPolicy}: a default, and valid values or a valid range). A capacity
     * without a policy can be taken in any amount up to what is left. Only for devices of {@link
     * #allowMultipleAllocations(Predicate)}.
     *
     * @param function the policies of a device's capacities
     * @return this builder
     */
    public Builder capacityPolicies(Function<Device, Map<String, CapacityRequestPolicy>> function) {
      this.capacityPolicies = Objects.requireNonNull(function, "capacityPolicies");
      return this;
    }

    /**
     * The binding conditions of each device (KEP-5007), or null for none. A device with conditions
     * is published with {@code bindsToNode: true}; the driver reports the condition with {@link
     * BackendDriver#deviceAttached} or {@link BackendDriver#deviceAttachFailed}.
     *
     * @param function the conditions of a device, or null
     * @return this builder
     */
    public Builder bindingConditions(Function<Device, BindingConditions> function) {
      this.bindingConditions = Objects.requireNonNull(function, "bindingConditions");
      return this;
    }

    /**
     * Sets the vendor attributes of each device (default none), e.g. model, PCI address, firmware.
     * Names are C identifiers of at most 32 characters, optionally after a DNS domain and {@code
     * /}; values are {@link Boolean}, {@link Integer}, {@link Long}, {@link String} or a fabric8
     * {@link DeviceAttribute}.
     *
     * @param function the attributes of a device; called on every mapping, keep it cheap
     * @return this builder
     */
    public Builder attributes(Function<Device, Map<String, ?>> function) {
      this.attributes = Objects.requireNonNull(function, "attributes");
      return this;
    }

    /**
     * Sets the capacities of each device (default none), as quantities such as {@code "16Gi"}.
     *
     * @param function the capacities of a device; called on every mapping, keep it cheap
     * @return this builder
     */
    public Builder capacities(Function<Device, Map<String, String>> function) {
      this.capacities = Objects.requireNonNull(function, "capacities");
      return this;
    }

    /**
     * Whether unhealthy devices are published too (default false: the scheduler cannot allocate a
     * device that is not in a slice, so an unhealthy device is left out until it recovers).
     *
     * @param value true to publish unhealthy devices
     * @return this builder
     */
    public Builder includeUnhealthy(boolean value) {
      this.includeUnhealthy = value;
      return this;
    }

    /**
     * Builds the mapping.
     *
     * @return the mapping
     */
    public BackendDevices build() {
      return new BackendDevices(this);
    }
  }
}
