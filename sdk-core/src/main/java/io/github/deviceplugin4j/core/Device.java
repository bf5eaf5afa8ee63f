package io.github.deviceplugin4j.core;

import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * One device as the backend knows it: its ID, health, NUMA nodes, and what a container needs to use
 * it.
 *
 * <p>Devices are data: when a backend fills in {@link #allocation()}, the core builds a container's
 * allocation by merging those of its devices, and the backend needs no allocate code at all.
 *
 * <pre>{@code
 * Device port = Device.builder("port0")
 *     .numaNode(0)
 *     .deviceNode(DeviceNode.rw("/dev/dfl-port.0"))
 *     .env("FPGA_PORT", "0")
 *     .build();
 * }</pre>
 *
 * <p>An unhealthy device may say why, in a short text ({@link #unhealthyReason()}): the core logs
 * it with each health change and shows it in {@link ResourceStatus#unhealthyReasons()}. The kubelet
 * API has no field for it: the kubelet and the pods never see it.
 *
 * @param id unique within the resource; at most 63 characters (the kubelet's limit)
 * @param health whether the device can be allocated
 * @param numaNodes NUMA nodes the device is attached to, sorted, without repeats; may be empty
 * @param allocation what a container needs to use this device alone
 * @param unhealthyReason why the device is unhealthy, for operators; empty when healthy or not
 *     known. At most {@value #MAX_REASON} characters without control characters: the core shortens
 *     a longer one and replaces control characters, and reports that as an {@link
 *     InvalidBackendDataException} (the device itself is kept)
 */
public record Device(
    String id,
    Health health,
    List<Integer> numaNodes,
    ContainerAllocation allocation,
    String unhealthyReason) {

  /** The longest {@link #unhealthyReason()} the core keeps whole. */
  public static final int MAX_REASON = 200;

  /**
   * Checks for nulls, sorts and de-duplicates the NUMA nodes; a healthy device has no reason, and a
   * null reason is empty.
   *
   * @param id see {@link #id()}
   * @param health see {@link #health()}
   * @param numaNodes see {@link #numaNodes()}
   * @param allocation see {@link #allocation()}
   * @param unhealthyReason see {@link #unhealthyReason()}
   */
  public Device {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(health, "health");
    numaNodes = List.copyOf(new TreeSet<>(Objects.requireNonNull(numaNodes, "numaNodes")));
    Objects.requireNonNull(allocation, "allocation");
    unhealthyReason = health == Health.HEALTHY || unhealthyReason == null ? "" : unhealthyReason;
  }

  /**
   * A device without an unhealthy reason.
   *
   * @param id see {@link #id()}
   * @param health see {@link #health()}
   * @param numaNodes see {@link #numaNodes()}
   * @param allocation see {@link #allocation()}
   */
  public Device(String id, Health health, List<Integer> numaNodes, ContainerAllocation allocation) {
    this(id, health, numaNodes, allocation, "");
  }

  /**
   * A healthy device with no topology and nothing to add to a container.
   *
   * @param id the device ID
   * @return the device
   */
  public static Device healthy(String id) {
    return new Device(id, Health.HEALTHY, List.of(), ContainerAllocation.empty());
  }

  /**
   * A builder for a healthy device with the given ID.
   *
   * @param id the device ID
   * @return a new builder
   */
  public static Builder builder(String id) {
    return new Builder(id);
  }

  /**
   * This device with another health.
   *
   * @param newHealth the health
   * @return a device equal to this one but for its health
   */
  public Device withHealth(Health newHealth) {
    return newHealth == health && unhealthyReason.isEmpty()
        ? this
        : new Device(id, newHealth, numaNodes, allocation, "");
  }

  /**
   * This device with another health and the reason for it, e.g. {@code
   * d.withHealth(Health.UNHEALTHY, "ECC errors over threshold")}. The reason is kept only for an
   * unhealthy device; the kubelet never sees it (its API has no field for it).
   *
   * @param newHealth the health
   * @param reason why, in a short text (at most {@value #MAX_REASON} characters); null or empty
   *     when not known
   * @return a device equal to this one but for its health and reason
   */
  public Device withHealth(Health newHealth, String reason) {
    return new Device(id, newHealth, numaNodes, allocation, reason);
  }

  /**
   * Whether the device is healthy.
   *
   * @return true for {@link Health#HEALTHY}
   */
  public boolean isHealthy() {
    return health == Health.HEALTHY;
  }

  /** Builds a {@link Device}; not thread-safe. */
  public static final class Builder {
    private final String id;
    private Health health = Health.HEALTHY;
    private String reason = "";
    private final TreeSet<Integer> numaNodes = new TreeSet<>();
    private final ContainerAllocation.Builder allocation = ContainerAllocation.builder();

    private Builder(String id) {
      this.id = Objects.requireNonNull(id, "id");
    }

    /**
     * Sets the health (default healthy).
     *
     * @param value the health
     * @return this builder
     */
    public Builder health(Health value) {
      this.health = Objects.requireNonNull(value, "health");
      return this;
    }

    /**
     * Sets the health and why (see {@link Device#withHealth(Health, String)}).
     *
     * @param value the health
     * @param unhealthyReason why it is unhealthy; ignored for a healthy device
     * @return this builder
     */
    public Builder health(Health value, String unhealthyReason) {
      this.health = Objects.requireNonNull(value, "health");
      this.reason = unhealthyReason;
      return this;
    }

    /**
     * Adds a NUMA node the device is attached to.
     *
     * @param node NUMA node ID, zero or more
     * @return this builder
     */
    public Builder numaNode(int node) {
      if (node < 0) {
        throw new IllegalArgumentException("numaNode must be >= 0, was " + node);
      }
      numaNodes.add(node);
      return this;
    }

    /**
     * Adds a device node to expose to containers that get this device.
     *
     * @param node the device node
     * @return this builder
     */
    public Builder deviceNode(DeviceNode node) {
      allocation.deviceNode(node);
      return this;
    }

    /**
     * Adds a mount for containers that get this device.
     *
     * @param mount the mount
     * @return this builder
     */
    public Builder mount(Mount mount) {
      allocation.mount(mount);
      return this;
    }

    /**
     * Sets an environment variable for containers that get this device.
     *
     * @param name variable name
     * @param value variable value
     * @return this builder
     */
    public Builder env(String name, String value) {
      allocation.env(name, value);
      return this;
    }

    /**
     * Sets an annotation for containers that get this device.
     *
     * @param key annotation key
     * @param value annotation value
     * @return this builder
     */
    public Builder annotation(String key, String value) {
      allocation.annotation(key, value);
      return this;
    }

    /**
     * Adds a fully qualified CDI device name for containers that get this device.
     *
     * @param name e.g. {@code vendor.example.com/fpga=port0}
     * @return this builder
     */
    public Builder cdiDevice(String name) {
      allocation.cdiDevice(name);
      return this;
    }

    /**
     * Builds the device.
     *
     * @return an immutable device
     */
    public Device build() {
      return new Device(id, health, List.copyOf(numaNodes), allocation.build(), reason);
    }
  }
}
