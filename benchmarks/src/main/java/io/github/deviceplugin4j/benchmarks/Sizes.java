package io.github.deviceplugin4j.benchmarks;

import java.util.List;

/**
 * How much each scenario measures. {@link #full()} is what the targets are stated for;
 * {@link #quick()} checks that every scenario works, in seconds ({@code --quick}); {@link
 * #smoke()}, smaller still, is what the build's tests run.
 *
 * @param allocateWarmup Allocate calls before measuring, per implementation and concurrency
 * @param allocateCalls Allocate calls measured, per implementation and concurrency
 * @param concurrencies Allocate concurrency levels
 * @param preferredCalls GetPreferredAllocation calls measured
 * @param admitCalls full admit paths measured
 * @param flips health changes measured
 * @param restarts kubelet restarts measured per registration mode
 * @param deviceCounts ListAndWatch list sizes
 * @param scaleRepeats list publications measured per size
 * @param coldStarts process starts measured per flag set
 * @param memoryAllocates Allocate calls before the loaded RSS is read
 * @param resources resources in one process
 * @param coldAllocates fresh plugin processes per flag set for the cold Allocate ({@code flags})
 * @param coldIdleSeconds idle time before the second cold Allocate ({@code flags})
 * @param coldSeries Allocates after the one after idle, {@link #COLD_SERIES_GAP_MS} ms apart, per
 *     cold process: a node calls its plugin a few times per pod start, far apart, so this is how
 *     most of its calls run
 */
public record Sizes(
    int allocateWarmup,
    int allocateCalls,
    List<Integer> concurrencies,
    int preferredCalls,
    int admitCalls,
    int flips,
    int restarts,
    List<Integer> deviceCounts,
    int scaleRepeats,
    int coldStarts,
    int memoryAllocates,
    int resources,
    int coldAllocates,
    int coldIdleSeconds,
    int coldSeries) {

  /** Milliseconds between the cold series' Allocates. */
  public static final int COLD_SERIES_GAP_MS = 100;

  /**
   * The sizes the targets are stated for.
   *
   * @return sizes
   */
  public static Sizes full() {
    return new Sizes(
        20_000,
        20_000,
        List.of(1, 4, 16),
        5_000,
        2_000,
        1_000,
        200,
        List.of(1_000, 10_000, 100_000),
        7,
        5,
        100_000,
        100,
        20,
        60,
        40);
  }

  /**
   * Small sizes that only check each scenario works.
   *
   * @return sizes
   */
  public static Sizes quick() {
    return new Sizes(
        200, 300, List.of(1, 4), 100, 30, 20, 5, List.of(100, 1_000), 2, 1, 2_000, 5, 2, 1, 3);
  }

  /**
   * The build's tests: each scenario's every step once or twice, so a table of each kind is made in
   * the least time (one cold process per flag set, three restarts, three resources).
   *
   * @return sizes
   */
  public static Sizes smoke() {
    return new Sizes(
        100, 100, List.of(1, 4), 50, 10, 10, 3, List.of(100, 1_000), 1, 1, 500, 3, 1, 1, 2);
  }
}
