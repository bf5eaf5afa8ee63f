package io.github.deviceplugin4j.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a container needs to use its devices: device nodes, mounts, environment variables,
 * annotations for the runtime and fully qualified CDI device names.
 *
 * <p>A {@link Device} carries the allocation for itself alone; the core merges those of the devices
 * in a request into the container's default allocation (see {@link #merge(ContainerAllocation)}).
 *
 * @param env environment variables, in insertion order
 * @param mounts bind mounts
 * @param deviceNodes device nodes
 * @param annotations annotations passed to the container runtime
 * @param cdiDevices fully qualified CDI device names, e.g. {@code vendor.example.com/fpga=port0}
 */
public record ContainerAllocation(
    Map<String, String> env,
    List<Mount> mounts,
    List<DeviceNode> deviceNodes,
    Map<String, String> annotations,
    List<String> cdiDevices) {

  private static final ContainerAllocation EMPTY =
      new ContainerAllocation(Map.of(), List.of(), List.of(), Map.of(), List.of());

  /**
   * Makes unmodifiable copies; content is validated by the core, not here.
   *
   * @param env see {@link #env()}
   * @param mounts see {@link #mounts()}
   * @param deviceNodes see {@link #deviceNodes()}
   * @param annotations see {@link #annotations()}
   * @param cdiDevices see {@link #cdiDevices()}
   */
  public ContainerAllocation {
    env = copy(env, "env");
    mounts = List.copyOf(Objects.requireNonNull(mounts, "mounts"));
    deviceNodes = List.copyOf(Objects.requireNonNull(deviceNodes, "deviceNodes"));
    annotations = copy(annotations, "annotations");
    cdiDevices = List.copyOf(Objects.requireNonNull(cdiDevices, "cdiDevices"));
  }

  /**
   * An allocation that adds nothing to the container.
   *
   * @return the empty allocation
   */
  public static ContainerAllocation empty() {
    return EMPTY;
  }

  /**
   * A builder starting empty.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder starting from this allocation's content.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    return new Builder().merge(this);
  }

  /**
   * Whether this allocation adds nothing.
   *
   * @return true when every part is empty
   */
  public boolean isEmpty() {
    return env.isEmpty()
        && mounts.isEmpty()
        && deviceNodes.isEmpty()
        && annotations.isEmpty()
        && cdiDevices.isEmpty();
  }

  /**
   * Combines this allocation with another, as the core does for the devices of one container.
   *
   * <p>Lists are concatenated without repeating equal entries. When both set the same environment
   * variable or annotation to different values, the values are joined with a comma in order (the
   * convention for variables such as {@code PCIDEVICE_...} that list every allocated device).
   *
   * @param other the allocation to add
   * @return the combination
   */
  public ContainerAllocation merge(ContainerAllocation other) {
    return toBuilder().merge(other).build();
  }

  private static Map<String, String> copy(Map<String, String> map, String name) {
    Objects.requireNonNull(map, name);
    return map.isEmpty()
        ? Map.of()
        : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(map));
  }

  /** Builds a {@link ContainerAllocation}; not thread-safe. */
  public static final class Builder {
    private final Map<String, String> env = new LinkedHashMap<>();
    private final List<Mount> mounts = new ArrayList<>();
    private final List<DeviceNode> deviceNodes = new ArrayList<>();
    private final Map<String, String> annotations = new LinkedHashMap<>();
    private final List<String> cdiDevices = new ArrayList<>();

    private Builder() {}

    /**
     * Sets an environment variable, replacing an earlier value.
     *
     * @param name variable name
     * @param value variable value
     * @return this builder
     */
    public Builder env(String name, String value) {
      env.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /**
     * Adds a bind mount.
     *
     * @param mount the mount
     * @return this builder
     */
    public Builder mount(Mount mount) {
      addOnce(mounts, Objects.requireNonNull(mount, "mount"));
      return this;
    }

    /**
     * Adds a device node.
     *
     * @param node the device node
     * @return this builder
     */
    public Builder deviceNode(DeviceNode node) {
      addOnce(deviceNodes, Objects.requireNonNull(node, "node"));
      return this;
    }

    /**
     * Sets an annotation, replacing an earlier value.
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
     * Adds a fully qualified CDI device name.
     *
     * @param name e.g. {@code vendor.example.com/fpga=port0}
     * @return this builder
     */
    public Builder cdiDevice(String name) {
      addOnce(cdiDevices, Objects.requireNonNull(name, "name"));
      return this;
    }

    /**
     * Adds everything of another allocation, joining differing values of the same variable or
     * annotation with a comma.
     *
     * @param other the allocation to add
     * @return this builder
     */
    public Builder merge(ContainerAllocation other) {
      Objects.requireNonNull(other, "other");
      other.env().forEach((k, v) -> env.merge(k, v, Builder::join));
      other.mounts().forEach(m -> addOnce(mounts, m));
      other.deviceNodes().forEach(n -> addOnce(deviceNodes, n));
      other.annotations().forEach((k, v) -> annotations.merge(k, v, Builder::join));
      other.cdiDevices().forEach(c -> addOnce(cdiDevices, c));
      return this;
    }

    /**
     * Builds the allocation.
     *
     * @return an immutable allocation
     */
    public ContainerAllocation build() {
      return new ContainerAllocation(env, mounts, deviceNodes, annotations, cdiDevices);
    }

    private static String join(String a, String b) {
      if (a.equals(b) || List.of(a.split(",", -1)).contains(b)) {
        return a;
      }
      return a + "," + b;
    }

    private static <T> void addOnce(List<T> list, T item) {
      if (!list.contains(item)) {
        list.add(item);
      }
    }
  }
}
