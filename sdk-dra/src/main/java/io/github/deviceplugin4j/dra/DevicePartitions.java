package io.github.deviceplugin4j.dra;

import io.github.deviceplugin4j.core.Device;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Optional capability of a {@code DeviceBackend} served by {@link BackendDriver}: partitionable
 * devices (KEP-4815, {@code DRAPartitionableDevices}, beta in Kubernetes 1.36). The backend names
 * shared counter sets, one per physical device, and which counters each of its devices consumes, so
 * the scheduler never allocates overlapping partitions of one card: a whole card that consumes all
 * of its counters, and ports that consume their share, can all be published while only fitting
 * combinations are allocated.
 *
 * <p>Detected with {@code instanceof}; called on the driver's reads thread after every {@code
 * devices()} with the list just read.
 *
 * <pre>{@code
 * class CardBackend implements DeviceBackend, DevicePartitions {
 *   public Partitions partitions(List<Device> devices) {
 *     return new Partitions(
 *         List.of(new CounterSet("card-0", Map.of("ports", "2"))),
 *         Map.of("card-0", List.of(new Consumption("card-0", Map.of("ports", "2"))),
 *                "card-0-port-0", List.of(new Consumption("card-0", Map.of("ports", "1"))),
 *                "card-0-port-1", List.of(new Consumption("card-0", Map.of("ports", "1")))));
 *   }
 * }
 * }</pre>
 */
@FunctionalInterface
public interface DevicePartitions {

  /**
   * The pool's counter sets and what each device consumes.
   *
   * @param devices the device list just read from the backend
   * @return the partitions; {@link Partitions#none()} for none
   */
  Partitions partitions(List<Device> devices);

  /**
   * A set of counters one physical device has, e.g. its ports or memory slices.
   *
   * @param name a DNS label, unique in the pool
   * @param counters counter name (a DNS label) to amount, a quantity such as {@code 2} or {@code
   *     16Gi}; at most 32
   */
  record CounterSet(String name, Map<String, String> counters) {
    /**
     * Copies the counters.
     *
     * @param name the set's name
     * @param counters the counters
     */
    public CounterSet {
      Objects.requireNonNull(name, "name");
      counters = Map.copyOf(counters);
    }
  }

  /**
   * What one device takes from a counter set while it is allocated.
   *
   * @param counterSet the set's name
   * @param counters counter name to amount taken
   */
  record Consumption(String counterSet, Map<String, String> counters) {
    /**
     * Copies the counters.
     *
     * @param counterSet the set's name
     * @param counters the counters
     */
    public Consumption {
      Objects.requireNonNull(counterSet, "counterSet");
      counters = Map.copyOf(counters);
    }
  }

  /**
   * The counter sets of the pool and, by backend device ID, what each device consumes (at most 2
   * sets per device).
   *
   * @param counterSets the counter sets
   * @param consumption by device ID; a device not named consumes nothing
   */
  record Partitions(List<CounterSet> counterSets, Map<String, List<Consumption>> consumption) {
    /**
     * Copies the lists.
     *
     * @param counterSets the counter sets
     * @param consumption what each device consumes
     */
    public Partitions {
      counterSets = List.copyOf(counterSets);
      consumption = Map.copyOf(consumption);
    }

    /**
     * No counter sets.
     *
     * @return empty partitions
     */
    public static Partitions none() {
      return new Partitions(List.of(), Map.of());
    }
  }
}
