package io.github.deviceplugin4j.cdi;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.github.deviceplugin4j.core.CdiNames;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Mount;
import io.github.deviceplugin4j.core.internal.state.Validation;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One CDI spec: a kind ({@code vendor/class}) and the container edits of each of its devices.
 *
 * <p>Built with {@link #builder(String)}; {@link Builder#build()} checks the kind and device names
 * against the CDI rules and the edits the way the core checks an allocation (absolute paths without
 * {@code ..}, permissions from {@code r}, {@code w}, {@code m}, valid variable names), so a spec
 * that a container runtime would refuse is never written.
 */
public final class CdiSpec {

  /**
   * The CDI spec version written by default: the first with device-node host paths and annotations.
   */
  public static final String DEFAULT_CDI_VERSION = "0.6.0";

  private static final JsonFactory JSON = new JsonFactory();

  private final String cdiVersion;
  private final String kind;
  private final Map<String, ContainerAllocation> devices;
  private final Map<String, String> annotations;
  private final List<String> order;

  private CdiSpec(Builder b) {
    this.cdiVersion = b.cdiVersion;
    this.kind = b.kind;
    this.devices = Map.copyOf(b.devices);
    this.annotations = Map.copyOf(b.annotations);
    this.order = List.copyOf(b.devices.keySet());
  }

  /**
   * A builder for a spec of the given kind.
   *
   * @param kind {@code vendor/class}, e.g. {@code vendor.example.com/fpga}
   * @return a new builder
   */
  public static Builder builder(String kind) {
    return new Builder(kind);
  }

  /**
   * A spec with one CDI device per backend device, named by the device ID, whose edits are the
   * device's allocation (its device nodes, mounts and environment). Pair it with {@link
   * #referencing(List)} so that the kubelet passes CDI names instead of the edits themselves.
   *
   * @param kind {@code vendor/class}
   * @param devices the backend's devices; their IDs must be valid CDI device names
   * @return the checked spec
   * @throws IllegalArgumentException naming every problem found
   */
  public static CdiSpec fromDevices(String kind, List<Device> devices) {
    Builder builder = builder(kind);
    devices.forEach(d -> builder.device(d.id(), d.allocation()));
    return builder.build();
  }

  /**
   * The same devices, each with an allocation that only names its CDI device in this spec, so the
   * container runtime applies the edits from the spec file.
   *
   * @param devices devices of this spec, by ID
   * @return devices with the same ID, health and NUMA nodes, whose allocation is the CDI name
   * @throws IllegalArgumentException if a device is not in this spec
   */
  public List<Device> referencing(List<Device> devices) {
    return devices.stream()
        .map(
            d ->
                new Device(
                    d.id(),
                    d.health(),
                    d.numaNodes(),
                    ContainerAllocation.builder().cdiDevice(qualifiedName(d.id())).build()))
        .toList();
  }

  /**
   * The kind, {@code vendor/class}.
   *
   * @return the kind
   */
  public String kind() {
    return kind;
  }

  /**
   * The CDI version written in the file.
   *
   * @return e.g. {@code 0.6.0}
   */
  public String cdiVersion() {
    return cdiVersion;
  }

  /**
   * Device names in the order they were added.
   *
   * @return the device names
   */
  public List<String> deviceNames() {
    return order;
  }

  /**
   * The container edits of one device.
   *
   * @param deviceName a device of this spec
   * @return its edits
   * @throws IllegalArgumentException if the spec has no such device
   */
  public ContainerAllocation edits(String deviceName) {
    ContainerAllocation edits = devices.get(deviceName);
    if (edits == null) {
      throw new IllegalArgumentException(
          "CDI spec " + kind + " has no device '" + deviceName + "'; it has " + order);
    }
    return edits;
  }

  /**
   * The fully qualified CDI name of one of this spec's devices, as a container runtime expects it
   * in a device plugin's {@code cdi_devices}.
   *
   * @param deviceName a device of this spec
   * @return {@code vendor/class=name}
   * @throws IllegalArgumentException if the spec has no such device
   */
  public String qualifiedName(String deviceName) {
    edits(deviceName);
    return kind + "=" + deviceName;
  }

  /**
   * The file name the CDI tooling uses for this kind: {@code vendor-class.json}.
   *
   * @return the file name
   */
  public String fileName() {
    return fileNameFor(kind);
  }

  static String fileNameFor(String kind) {
    return kind.replace('/', '-') + ".json";
  }

  /**
   * The spec as JSON, pretty-printed.
   *
   * @return the JSON text
   */
  public String toJson() {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.useDefaultPrettyPrinter();
      g.writeStartObject();
      g.writeStringField("cdiVersion", cdiVersion);
      g.writeStringField("kind", kind);
      if (!annotations.isEmpty()) {
        writeMap(g, "annotations", annotations);
      }
      g.writeArrayFieldStart("devices");
      for (String name : order) {
        g.writeStartObject();
        g.writeStringField("name", name);
        writeEdits(g, devices.get(name));
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("writing CDI spec " + kind + " to memory failed", e);
    }
    return out.toString() + "\n";
  }

  private static void writeEdits(JsonGenerator g, ContainerAllocation edits) throws IOException {
    g.writeObjectFieldStart("containerEdits");
    if (!edits.env().isEmpty()) {
      g.writeArrayFieldStart("env");
      for (Map.Entry<String, String> e : edits.env().entrySet()) {
        g.writeString(e.getKey() + "=" + e.getValue());
      }
      g.writeEndArray();
    }
    if (!edits.deviceNodes().isEmpty()) {
      g.writeArrayFieldStart("deviceNodes");
      for (DeviceNode node : edits.deviceNodes()) {
        g.writeStartObject();
        g.writeStringField("path", node.containerPath());
        g.writeStringField("hostPath", node.hostPath());
        g.writeStringField("permissions", node.permissions());
        g.writeEndObject();
      }
      g.writeEndArray();
    }
    if (!edits.mounts().isEmpty()) {
      g.writeArrayFieldStart("mounts");
      for (Mount mount : edits.mounts()) {
        g.writeStartObject();
        g.writeStringField("hostPath", mount.hostPath());
        g.writeStringField("containerPath", mount.containerPath());
        g.writeArrayFieldStart("options");
        if (mount.readOnly()) {
          g.writeString("ro");
        }
        g.writeString("nosuid");
        g.writeString("nodev");
        g.writeString("bind");
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  private static void writeMap(JsonGenerator g, String field, Map<String, String> map)
      throws IOException {
    g.writeObjectFieldStart(field);
    for (Map.Entry<String, String> e : new java.util.TreeMap<>(map).entrySet()) {
      g.writeStringField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
  }

  /** Builds a {@link CdiSpec}; not thread-safe. */
  public static final class Builder {
    private final String kind;
    private String cdiVersion = DEFAULT_CDI_VERSION;
    private final Map<String, ContainerAllocation> devices = new LinkedHashMap<>();
    private final Map<String, String> annotations = new LinkedHashMap<>();

    private Builder(String kind) {
      this.kind = Objects.requireNonNull(kind, "kind");
    }

    /**
     * Sets the CDI version written in the file (default {@value #DEFAULT_CDI_VERSION}).
     *
     * @param version a CDI spec version the node's container runtime supports
     * @return this builder
     */
    public Builder cdiVersion(String version) {
      this.cdiVersion = Objects.requireNonNull(version, "version");
      return this;
    }

    /**
     * Adds a device with the edits a container that gets it needs. Only device nodes, mounts and
     * environment variables are expressible in CDI; annotations and CDI names in the edits are
     * refused by {@link #build()}.
     *
     * @param name device name, unique in the spec
     * @param edits what the container needs
     * @return this builder
     */
    public Builder device(String name, ContainerAllocation edits) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(edits, "edits");
      if (devices.putIfAbsent(name, edits) != null) {
        throw new IllegalArgumentException(
            "CDI spec " + kind + " already has a device named '" + name + "'");
      }
      return this;
    }

    /**
     * Adds a spec-level annotation (information for consumers of the spec).
     *
     * @param key annotation key
     * @param value annotation value
     * @return this builder
     */
    public Builder annotation(String key, String value) {
      annotations.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /**
     * Checks and builds the spec.
     *
     * @return the spec
     * @throws IllegalArgumentException naming every problem found
     */
    public CdiSpec build() {
      List<String> problems = new ArrayList<>();
      if (devices.isEmpty()) {
        problems.add("a CDI spec needs at least one device");
      }
      for (Map.Entry<String, ContainerAllocation> d : devices.entrySet()) {
        String nameProblem = CdiNames.problem(kind + "=" + d.getKey());
        if (nameProblem != null) {
          problems.add(nameProblem);
        }
        checkEdits(d.getKey(), d.getValue(), problems);
      }
      if (!problems.isEmpty()) {
        throw new IllegalArgumentException(
            "invalid CDI spec " + kind + ": " + String.join("; ", problems));
      }
      return new CdiSpec(this);
    }

    private static void checkEdits(String device, ContainerAllocation edits, List<String> out) {
      String where = "device '" + device + "': ";
      if (!edits.annotations().isEmpty()) {
        out.add(where + "annotations cannot be expressed in CDI container edits");
      }
      if (!edits.cdiDevices().isEmpty()) {
        out.add(where + "a CDI device cannot refer to other CDI devices " + edits.cdiDevices());
      }
      // The same checks the core applies to an allocation before it reaches the kubelet.
      ContainerAllocation expressible =
          new ContainerAllocation(
              edits.env(), edits.mounts(), edits.deviceNodes(), Map.of(), List.of());
      Validation.allocationProblems(expressible).forEach(p -> out.add(where + p));
    }
  }
}
