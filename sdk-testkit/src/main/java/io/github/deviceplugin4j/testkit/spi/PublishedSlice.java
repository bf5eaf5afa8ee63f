package io.github.deviceplugin4j.testkit.spi;

import java.util.List;
import java.util.Objects;

/**
 * One ResourceSlice as a driver published it, in plain data.
 *
 * @param name {@code metadata.name}
 * @param driver {@code spec.driver}
 * @param pool {@code spec.pool.name}
 * @param generation {@code spec.pool.generation}
 * @param resourceSliceCount {@code spec.pool.resourceSliceCount}
 * @param nodeSelection which node the slice is for: {@code "nodeName=NODE"}, {@code "allNodes"},
 *     {@code "nodeSelector"}, {@code "perDeviceNodeSelection"}, or {@code "none"}
 * @param devices the slice's devices, in order
 * @param problems what the API server's validation refuses in the slice, one sentence per problem
 *     naming the field and the rule; empty when the slice is valid
 */
public record PublishedSlice(
    String name,
    String driver,
    String pool,
    long generation,
    long resourceSliceCount,
    String nodeSelection,
    List<PublishedDevice> devices,
    List<String> problems) {

  /**
   * The {@link #nodeSelection} of a slice whose {@code spec.nodeName} is {@code node}.
   *
   * @param node the node's name
   * @return {@code "nodeName=" + node}
   */
  public static String nodeName(String node) {
    return "nodeName=" + node;
  }

  /**
   * Checks the components and copies the lists.
   *
   * @param name see {@link #name()}
   * @param driver see {@link #driver()}
   * @param pool see {@link #pool()}
   * @param generation see {@link #generation()}
   * @param resourceSliceCount see {@link #resourceSliceCount()}
   * @param nodeSelection see {@link #nodeSelection()}
   * @param devices see {@link #devices()}
   * @param problems see {@link #problems()}
   */
  public PublishedSlice {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(nodeSelection, "nodeSelection");
    devices = List.copyOf(devices);
    problems = List.copyOf(problems);
  }

  /**
   * One device of a slice.
   *
   * @param name the device's name
   * @param taints its taints, in order
   */
  public record PublishedDevice(String name, List<Taint> taints) {
    /**
     * Checks the components and copies the list.
     *
     * @param name see {@link #name()}
     * @param taints see {@link #taints()}
     */
    public PublishedDevice {
      Objects.requireNonNull(name, "name");
      taints = List.copyOf(taints);
    }
  }

  /**
   * A device taint.
   *
   * @param key the key, e.g. {@code gpu.example.com/unhealthy}
   * @param value the value; empty when none
   * @param effect {@code NoSchedule}, {@code NoExecute} or {@code None}
   */
  public record Taint(String key, String value, String effect) {
    /**
     * Checks the key; a null value or effect becomes empty.
     *
     * @param key see {@link #key()}
     * @param value see {@link #value()}
     * @param effect see {@link #effect()}
     */
    public Taint {
      Objects.requireNonNull(key, "key");
      value = value == null ? "" : value;
      effect = effect == null ? "" : effect;
    }

    @Override
    public String toString() {
      return key + (value.isEmpty() ? "" : "=" + value) + ":" + effect;
    }
  }
}
