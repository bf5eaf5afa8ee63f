package io.github.deviceplugin4j.testkit;

import java.util.List;
import java.util.Objects;

/**
 * One device as the {@link FakeKubelet} currently sees it.
 *
 * @param id the device ID as sent in {@code ListAndWatch}
 * @param health the health string as sent ({@code "Healthy"} or {@code "Unhealthy"}; anything else
 *     counts as unhealthy, as in the kubelet). After the plugin's connection drops the kubelet
 *     marks every device {@code "Unhealthy"}.
 * @param numaNodes the NUMA node IDs from the device's topology, empty if it has none
 */
public record DeviceState(String id, String health, List<Long> numaNodes) {

  /** The health string the kubelet counts as healthy. */
  public static final String HEALTHY = "Healthy";

  /** The health string for unhealthy devices. */
  public static final String UNHEALTHY = "Unhealthy";

  /**
   * Checks the components and copies the collections.
   *
   * @param id see {@link #id()}
   * @param health see {@link #health()}
   * @param numaNodes see {@link #numaNodes()}
   */
  public DeviceState {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(health, "health");
    numaNodes = List.copyOf(numaNodes);
  }

  /**
   * Whether the kubelet counts this device as allocatable.
   *
   * @return true when the health is exactly {@code "Healthy"}
   */
  public boolean healthy() {
    return HEALTHY.equals(health);
  }
}
