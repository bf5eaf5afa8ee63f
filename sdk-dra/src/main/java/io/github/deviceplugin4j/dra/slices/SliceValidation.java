package io.github.deviceplugin4j.dra.slices;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The checks the API server applies to a ResourceSlice and to a claim's device status, applied by
 * the SDK before it writes, so that one device with a bad name or too many taints is left out (and
 * named in a log line) instead of the whole slice being refused.
 *
 * <p>The rules and limits are those of upstream's {@code
 * pkg/apis/resource/validation/validation.go} in kubernetes/kubernetes ({@code
 * validateResourceSliceSpec}, {@code validateDevice}, {@code validateCounterSet}, {@code
 * validateDeviceTaint}, {@code validateDeviceBindingParameters}, {@code validateRequestPolicy},
 * {@code validateDeviceStatus}), with the constants of {@code
 * staging/src/k8s.io/api/resource/v1/types.go} (Kubernetes 1.37). Each problem is one sentence that
 * names the device or counter set, the field and the limit.
 *
 * <pre>{@code
 * List<String> problems = SliceValidation.device(device);
 * if (!problems.isEmpty()) {
 *   log.error("device {} is left out: {}", device.getName(), problems);
 * }
 * }</pre>
 */
public final class SliceValidation {

  /** Devices per slice ({@code ResourceSliceMaxDevices}). */
  public static final int MAX_DEVICES = 128;

  /**
   * Devices per slice when any device of it has taints or consumes counters ({@code
   * ResourceSliceMaxDevicesWithTaintsOrConsumesCounters}).
   */
  public static final int MAX_DEVICES_WITH_TAINTS_OR_COUNTERS = 64;

  /** Counter sets per slice ({@code ResourceSliceMaxCounterSets}). */
  public static final int MAX_COUNTER_SETS = 8;

  /** Counters per counter set ({@code ResourceSliceMaxCountersPerCounterSet}). */
  public static final int MAX_COUNTERS_PER_SET = 32;

  /**
   * Counter consumptions per device ({@code ResourceSliceMaxDeviceCounterConsumptionsPerDevice}).
   */
  public static final int MAX_CONSUMPTIONS_PER_DEVICE = 2;

  /**
   * Counters per counter consumption ({@code ResourceSliceMaxCountersPerDeviceCounterConsumption}).
   */
  public static final int MAX_COUNTERS_PER_CONSUMPTION = 32;

  /**
   * Attributes and capacities together per device ({@code
   * ResourceSliceMaxAttributesAndCapacitiesPerDevice}).
   */
  public static final int MAX_ATTRIBUTES_AND_CAPACITIES = 32;

  /** Taints per device ({@code DeviceTaintsMaxLength}). */
  public static final int MAX_TAINTS = 16;

  /** Binding conditions per device ({@code BindingConditionsMaxSize}). */
  public static final int MAX_BINDING_CONDITIONS = 4;

  /** Binding failure conditions per device ({@code BindingFailureConditionsMaxSize}). */
  public static final int MAX_BINDING_FAILURE_CONDITIONS = 4;

  /** Length of a string or version attribute ({@code DeviceAttributeMaxValueLength}). */
  public static final int MAX_ATTRIBUTE_VALUE_LENGTH = 64;

  /** Length of the identifier of an attribute or capacity name ({@code DeviceMaxIDLength}). */
  public static final int MAX_ID_LENGTH = 32;

  /** Length of the domain of an attribute or capacity name ({@code DeviceMaxDomainLength}). */
  public static final int MAX_DOMAIN_LENGTH = 63;

  /**
   * Valid values of a capacity's request policy ({@code CapacityRequestPolicyDiscreteMaxOptions}).
   */
  public static final int MAX_VALID_VALUES = 10;

  /** Conditions per allocated device status ({@code AllocatedDeviceStatusMaxConditions}). */
  public static final int MAX_STATUS_CONDITIONS = 8;

  /** Interface name length ({@code NetworkDeviceDataInterfaceNameMaxLength}). */
  public static final int MAX_INTERFACE_NAME_LENGTH = 256;

  /** Hardware address length ({@code NetworkDeviceDataHardwareAddressMaxLength}). */
  public static final int MAX_HARDWARE_ADDRESS_LENGTH = 128;

  /** IP addresses per device status ({@code NetworkDeviceDataMaxIPs}). */
  public static final int MAX_IPS = 16;

  /** The taint effects the API accepts. */
  public static final Set<String> TAINT_EFFECTS = Set.of("None", "NoSchedule", "NoExecute");

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern C_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern LABEL_NAME =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern SEMVER =
      Pattern.compile(
          "(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)"
              + "(-(0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(\\.(0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
              + "(\\+[0-9a-zA-Z-]+(\\.[0-9a-zA-Z-]+)*)?");
  private static final Pattern IP_OR_CIDR = Pattern.compile("[0-9a-fA-F:.]+(/[0-9]{1,3})?");

  private SliceValidation() {}

  /**
   * What the API server would refuse in one device of a slice.
   *
   * @param device the device as it is about to be written
   * @return one sentence per problem, naming the device, the field and the limit; empty when valid
   */
  public static List<String> device(Device device) {
    List<String> out = new ArrayList<>();
    String name = device.getName();
    String at = "device '" + name + "'";
    if (name == null || name.length() > 63 || !DNS_LABEL.matcher(name).matches()) {
      out.add(at + ": name must be a DNS label (lowercase letters, digits, '-', at most 63)");
    }
    Map<String, DeviceAttribute> attributes = orEmpty(device.getAttributes());
    Map<String, DeviceCapacity> capacity = orEmpty(device.getCapacity());
    int count = attributes.size() + capacity.size();
    if (count > MAX_ATTRIBUTES_AND_CAPACITIES) {
      out.add(
          at
              + ": "
              + count
              + " attributes and capacities, at most "
              + MAX_ATTRIBUTES_AND_CAPACITIES
              + " together are allowed");
    }
    attributes.forEach(
        (key, value) -> {
          qualifiedName(out, at + ": attribute", key);
          attribute(out, at + ": attribute '" + key + "'", value);
        });
    boolean multi = Boolean.TRUE.equals(device.getAllowMultipleAllocations());
    capacity.forEach(
        (key, value) -> {
          qualifiedName(out, at + ": capacity", key);
          capacity(out, at + ": capacity '" + key + "'", value, multi);
        });
    List<DeviceTaint> taints = orEmpty(device.getTaints());
    if (taints.size() > MAX_TAINTS) {
      out.add(at + ": " + taints.size() + " taints, at most " + MAX_TAINTS + " are allowed");
    } else {
      for (DeviceTaint t : taints) {
        taint(out, at, t);
      }
    }
    List<DeviceCounterConsumption> consumes = orEmpty(device.getConsumesCounters());
    if (consumes.size() > MAX_CONSUMPTIONS_PER_DEVICE) {
      out.add(
          at
              + ": consumes from "
              + consumes.size()
              + " counter sets, at most "
              + MAX_CONSUMPTIONS_PER_DEVICE
              + " are allowed");
    } else {
      Set<String> sets = new HashSet<>();
      for (DeviceCounterConsumption c : consumes) {
        String set = c.getCounterSet();
        if (!sets.add(String.valueOf(set))) {
          out.add(at + ": consumesCounters names counter set '" + set + "' twice");
        }
        counterSetName(out, at + ": consumesCounters", set);
        counters(
            out,
            at + ": consumesCounters '" + set + "'",
            c.getCounters(),
            MAX_COUNTERS_PER_CONSUMPTION);
      }
    }
    bindingConditions(out, at, device.getBindingConditions(), device.getBindingFailureConditions());
    if (device.getNodeName() != null
        || device.getNodeSelector() != null
        || device.getAllNodes() != null) {
      out.add(
          at
              + ": nodeName, nodeSelector and allNodes are only allowed with perDeviceNodeSelection,"
              + " which a node-local pool does not use");
    }
    return out;
  }

  /**
   * What the API server would refuse in a counter set of a slice's {@code sharedCounters}.
   *
   * @param set the counter set
   * @return one sentence per problem; empty when valid
   */
  public static List<String> counterSet(CounterSet set) {
    List<String> out = new ArrayList<>();
    counterSetName(out, "counter set", set.getName());
    counters(out, "counter set '" + set.getName() + "'", set.getCounters(), MAX_COUNTERS_PER_SET);
    return out;
  }

  /**
   * What the API server would refuse in a whole slice's spec: the number of devices and counter
   * sets, devices and counter sets in one slice, duplicate names, and every device and counter set.
   *
   * @param spec the slice's spec
   * @return one sentence per problem; empty when valid
   */
  public static List<String> slice(ResourceSliceSpec spec) {
    List<String> out = new ArrayList<>();
    List<Device> devices = orEmpty(spec.getDevices());
    List<CounterSet> sets = orEmpty(spec.getSharedCounters());
    if (!devices.isEmpty() && !sets.isEmpty()) {
      out.add("a slice holds either devices or sharedCounters, not both");
    }
    int max = maxDevices(devices);
    if (devices.size() > max) {
      out.add(
          devices.size()
              + " devices in one slice, at most "
              + max
              + (max == MAX_DEVICES ? "" : " when a device has taints or consumes counters")
              + " are allowed");
    }
    if (sets.size() > MAX_COUNTER_SETS) {
      out.add(
          sets.size() + " counter sets in one slice, at most " + MAX_COUNTER_SETS + " are allowed");
    }
    Set<String> names = new HashSet<>();
    for (Device d : devices) {
      if (!names.add(String.valueOf(d.getName()))) {
        out.add("device '" + d.getName() + "' appears twice in one slice");
      }
      out.addAll(device(d));
    }
    Set<String> setNames = new HashSet<>();
    for (CounterSet s : sets) {
      if (!setNames.add(String.valueOf(s.getName()))) {
        out.add("counter set '" + s.getName() + "' appears twice in one slice");
      }
      out.addAll(counterSet(s));
    }
    return out;
  }

  /**
   * The most devices a slice holding these devices may have.
   *
   * @param devices the slice's devices
   * @return {@value #MAX_DEVICES_WITH_TAINTS_OR_COUNTERS} when any has taints or consumes counters,
   *     else {@value #MAX_DEVICES}
   */
  public static int maxDevices(List<Device> devices) {
    for (Device d : devices) {
      if (limitsSlice(d)) {
        return MAX_DEVICES_WITH_TAINTS_OR_COUNTERS;
      }
    }
    return MAX_DEVICES;
  }

  /**
   * Whether a device lowers its slice's device limit: it has taints or consumes counters.
   *
   * @param d the device
   * @return true when it does
   */
  public static boolean limitsSlice(Device d) {
    return !orEmpty(d.getTaints()).isEmpty() || !orEmpty(d.getConsumesCounters()).isEmpty();
  }

  /**
   * What the API server would refuse in one entry of a claim's {@code status.devices}.
   *
   * @param status the entry
   * @return one sentence per problem; empty when valid
   */
  public static List<String> deviceStatus(AllocatedDeviceStatus status) {
    List<String> out = new ArrayList<>();
    String at = "status of device '" + status.getPool() + "/" + status.getDevice() + "'";
    if (status.getDevice() == null || !DNS_LABEL.matcher(status.getDevice()).matches()) {
      out.add(at + ": device must be a DNS label");
    }
    int conditions = orEmpty(status.getConditions()).size();
    if (conditions > MAX_STATUS_CONDITIONS) {
      out.add(
          at
              + ": "
              + conditions
              + " conditions, at most "
              + MAX_STATUS_CONDITIONS
              + " are allowed");
    }
    for (var c : orEmpty(status.getConditions())) {
      if (c.getType() == null || !labelName(c.getType())) {
        out.add(at + ": condition type '" + c.getType() + "' must be a label name");
      }
      if (!Set.of("True", "False", "Unknown").contains(String.valueOf(c.getStatus()))) {
        out.add(
            at
                + ": condition "
                + c.getType()
                + " has status '"
                + c.getStatus()
                + "', not True, False or Unknown");
      }
    }
    var net = status.getNetworkData();
    if (net != null) {
      if (net.getInterfaceName() != null
          && net.getInterfaceName().length() > MAX_INTERFACE_NAME_LENGTH) {
        out.add(at + ": interfaceName is longer than " + MAX_INTERFACE_NAME_LENGTH);
      }
      if (net.getHardwareAddress() != null
          && net.getHardwareAddress().length() > MAX_HARDWARE_ADDRESS_LENGTH) {
        out.add(at + ": hardwareAddress is longer than " + MAX_HARDWARE_ADDRESS_LENGTH);
      }
      List<String> ips = orEmpty(net.getIps());
      if (ips.size() > MAX_IPS) {
        out.add(at + ": " + ips.size() + " IPs, at most " + MAX_IPS + " are allowed");
      }
      Set<String> seen = new HashSet<>();
      for (String ip : ips) {
        if (!IP_OR_CIDR.matcher(ip).matches() || !ip.contains("/")) {
          out.add(
              at + ": IP '" + ip + "' must be an address with its prefix length, e.g. 10.0.0.5/24");
        }
        if (!seen.add(ip)) {
          out.add(at + ": IP '" + ip + "' appears twice");
        }
      }
    }
    return out;
  }

  /**
   * Whether a string is a label name (a taint key, a condition type): an optional DNS subdomain
   * prefix of at most 253 characters and {@code /}, then at most 63 of {@code [-A-Za-z0-9_.]},
   * starting and ending alphanumeric.
   *
   * @param s the string
   * @return true when valid
   */
  public static boolean labelName(String s) {
    String name = s;
    int slash = s.lastIndexOf('/');
    if (slash >= 0) {
      String prefix = s.substring(0, slash);
      name = s.substring(slash + 1);
      if (prefix.isEmpty() || prefix.length() > 253 || !DNS_SUBDOMAIN.matcher(prefix).matches()) {
        return false;
      }
    }
    return !name.isEmpty() && name.length() <= 63 && LABEL_NAME.matcher(name).matches();
  }

  /**
   * Whether a string is a label value: empty, or at most 63 of {@code [-A-Za-z0-9_.]} starting and
   * ending alphanumeric.
   *
   * @param s the string
   * @return true when valid
   */
  public static boolean labelValue(String s) {
    return s.isEmpty() || (s.length() <= 63 && LABEL_NAME.matcher(s).matches());
  }

  private static void taint(List<String> out, String at, DeviceTaint t) {
    String key = t.getKey();
    if (key == null || !labelName(key)) {
      out.add(at + ": taint key '" + key + "' must be a label name, e.g. example.com/unhealthy");
    }
    if (t.getValue() != null && !labelValue(t.getValue())) {
      out.add(
          at
              + ": taint "
              + key
              + " has value '"
              + t.getValue()
              + "', which is not a label value (at most 63 of A-Z a-z 0-9 - _ .)");
    }
    if (!TAINT_EFFECTS.contains(String.valueOf(t.getEffect()))) {
      out.add(
          at
              + ": taint "
              + key
              + " has effect '"
              + t.getEffect()
              + "', use one of "
              + TAINT_EFFECTS);
    }
  }

  private static void bindingConditions(
      List<String> out, String at, List<String> conditions, List<String> failures) {
    List<String> ok = orEmpty(conditions);
    List<String> bad = orEmpty(failures);
    if (ok.size() > MAX_BINDING_CONDITIONS) {
      out.add(
          at
              + ": "
              + ok.size()
              + " bindingConditions, at most "
              + MAX_BINDING_CONDITIONS
              + " are allowed");
    }
    if (bad.size() > MAX_BINDING_FAILURE_CONDITIONS) {
      out.add(
          at
              + ": "
              + bad.size()
              + " bindingFailureConditions, at most "
              + MAX_BINDING_FAILURE_CONDITIONS
              + " are allowed");
    }
    Set<String> seen = new HashSet<>();
    for (String c : ok) {
      if (c == null || !labelName(c)) {
        out.add(at + ": binding condition '" + c + "' must be a label name");
      }
      if (!seen.add(String.valueOf(c))) {
        out.add(at + ": binding condition '" + c + "' appears twice");
      }
    }
    Set<String> seenBad = new HashSet<>();
    for (String c : bad) {
      if (c == null || !labelName(c)) {
        out.add(at + ": binding failure condition '" + c + "' must be a label name");
      }
      if (!seenBad.add(String.valueOf(c))) {
        out.add(at + ": binding failure condition '" + c + "' appears twice");
      }
      if (seen.contains(c)) {
        out.add(at + ": '" + c + "' is both a binding condition and a binding failure condition");
      }
    }
    if (ok.isEmpty() != bad.isEmpty()) {
      out.add(at + ": bindingConditions and bindingFailureConditions must be set together");
    }
  }

  private static void attribute(List<String> out, String at, DeviceAttribute a) {
    int set = 0;
    set += a.getBool() != null ? 1 : 0;
    set += a.getInt() != null ? 1 : 0;
    set += a.getString() != null ? 1 : 0;
    set += a.getVersion() != null ? 1 : 0;
    if (set != 1) {
      out.add(at + ": exactly one of bool, int, string and version must be set, found " + set);
    }
    if (a.getString() != null && a.getString().length() > MAX_ATTRIBUTE_VALUE_LENGTH) {
      out.add(
          at
              + ": string of "
              + a.getString().length()
              + " characters, at most "
              + MAX_ATTRIBUTE_VALUE_LENGTH
              + " are allowed");
    }
    if (a.getVersion() != null) {
      if (a.getVersion().length() > MAX_ATTRIBUTE_VALUE_LENGTH) {
        out.add(at + ": version longer than " + MAX_ATTRIBUTE_VALUE_LENGTH + " characters");
      }
      if (!SEMVER.matcher(a.getVersion()).matches()) {
        out.add(
            at + ": version '" + a.getVersion() + "' is not a semantic version (semver.org 2.0.0)");
      }
    }
  }

  private static void capacity(List<String> out, String at, DeviceCapacity c, boolean multi) {
    if (c.getValue() == null) {
      out.add(at + ": has no value");
      return;
    }
    CapacityRequestPolicy p = c.getRequestPolicy();
    if (p == null) {
      return;
    }
    if (!multi) {
      out.add(at + ": a requestPolicy needs allowMultipleAllocations: true on the device");
      return;
    }
    BigDecimal max = amount(c.getValue());
    List<Quantity> valid = orEmpty(p.getValidValues());
    if (!valid.isEmpty() && p.getValidRange() != null) {
      out.add(at + ": requestPolicy sets both validValues and validRange, only one is allowed");
      return;
    }
    if ((!valid.isEmpty() || p.getValidRange() != null) && p.getDefault() == null) {
      out.add(at + ": requestPolicy needs a default with validValues or validRange");
      return;
    }
    if (!valid.isEmpty()) {
      if (valid.size() > MAX_VALID_VALUES) {
        out.add(
            at
                + ": "
                + valid.size()
                + " validValues, at most "
                + MAX_VALID_VALUES
                + " are allowed");
        return;
      }
      boolean hasDefault = false;
      BigDecimal previous = null;
      for (Quantity q : valid) {
        BigDecimal v = amount(q);
        if (previous != null && previous.compareTo(v) > 0) {
          out.add(at + ": validValues must be sorted in ascending order");
        }
        if (v.compareTo(max) > 0) {
          out.add(at + ": valid value " + q + " is larger than the capacity " + c.getValue());
        }
        hasDefault |= v.compareTo(amount(p.getDefault())) == 0;
        previous = v;
      }
      if (!hasDefault) {
        out.add(at + ": default " + p.getDefault() + " is not one of validValues");
      }
    }
    var range = p.getValidRange();
    if (range != null) {
      if (range.getMin() == null) {
        out.add(at + ": validRange needs a min");
        return;
      }
      BigDecimal min = amount(range.getMin());
      BigDecimal def = amount(p.getDefault());
      if (min.compareTo(max) > 0) {
        out.add(at + ": validRange min " + range.getMin() + " is larger than the capacity");
      }
      if (def.compareTo(min) < 0) {
        out.add(at + ": default " + p.getDefault() + " is below validRange min " + range.getMin());
      }
      if (range.getMax() != null) {
        BigDecimal rmax = amount(range.getMax());
        if (min.compareTo(rmax) > 0 || rmax.compareTo(max) > 0 || def.compareTo(rmax) > 0) {
          out.add(
              at
                  + ": validRange max "
                  + range.getMax()
                  + " must be >= min and default and <= the capacity");
        }
      }
      if (range.getStep() != null) {
        BigDecimal step = amount(range.getStep());
        if (min.add(step).compareTo(max) > 0) {
          out.add(at + ": validRange min + step is larger than the capacity");
        }
        if (step.signum() > 0 && def.subtract(min).remainder(step).signum() != 0) {
          out.add(at + ": default " + p.getDefault() + " is not min plus a multiple of step");
        }
      }
    }
  }

  private static void counters(
      List<String> out, String at, Map<String, Counter> counters, int max) {
    Map<String, Counter> m = orEmpty(counters);
    if (m.isEmpty()) {
      out.add(at + ": needs at least one counter");
      return;
    }
    if (m.size() > max) {
      out.add(at + ": " + m.size() + " counters, at most " + max + " are allowed");
      return;
    }
    m.forEach(
        (name, counter) -> {
          if (name == null || name.length() > 63 || !DNS_LABEL.matcher(name).matches()) {
            out.add(at + ": counter name '" + name + "' must be a DNS label");
          }
          if (counter == null || counter.getValue() == null) {
            out.add(at + ": counter '" + name + "' has no value");
          }
        });
  }

  private static void counterSetName(List<String> out, String at, String name) {
    if (name == null || name.length() > 63 || !DNS_LABEL.matcher(name).matches()) {
      out.add(at + ": counter set name '" + name + "' must be a DNS label");
    }
  }

  /**
   * Whether {@code key} is a valid attribute or capacity name: a C identifier of at most {@value
   * #MAX_ID_LENGTH} characters, optionally after a DNS subdomain of at most {@value
   * #MAX_DOMAIN_LENGTH} characters and {@code /} (upstream's {@code validateQualifiedName}).
   *
   * @param key the name
   * @return whether upstream accepts it
   */
  public static boolean isQualifiedName(String key) {
    String domain = null;
    String id = key;
    int slash = key.indexOf('/');
    if (slash >= 0) {
      domain = key.substring(0, slash);
      id = key.substring(slash + 1);
    }
    return C_IDENTIFIER.matcher(id).matches()
        && id.length() <= MAX_ID_LENGTH
        && (domain == null
            || (domain.length() <= MAX_DOMAIN_LENGTH && DNS_SUBDOMAIN.matcher(domain).matches()));
  }

  private static void qualifiedName(List<String> out, String at, String key) {
    boolean ok = isQualifiedName(key);
    if (!ok) {
      out.add(
          at
              + " name '"
              + key
              + "' must be a C identifier of at most "
              + MAX_ID_LENGTH
              + " characters, optionally after a DNS domain of at most "
              + MAX_DOMAIN_LENGTH
              + " and '/'");
    }
  }

  private static BigDecimal amount(Quantity q) {
    return q.getNumericalAmount();
  }

  private static <T> List<T> orEmpty(List<T> l) {
    return l == null ? List.of() : l;
  }

  private static <K, V> Map<K, V> orEmpty(Map<K, V> m) {
    return m == null ? Map.of() : m;
  }
}
