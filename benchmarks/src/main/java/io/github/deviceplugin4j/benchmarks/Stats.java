package io.github.deviceplugin4j.benchmarks;

import java.util.Arrays;

/**
 * Percentiles of a set of measured durations (nearest-rank on the sorted samples, no binning: every
 * sample is kept).
 */
public final class Stats {

  private final long[] sorted;

  private Stats(long[] sorted) {
    this.sorted = sorted;
  }

  /**
   * Statistics of samples.
   *
   * @param nanos durations in nanoseconds; copied
   * @param count how many of them are valid, from the start
   * @return the statistics
   * @throws IllegalArgumentException when there is no sample
   */
  public static Stats of(long[] nanos, int count) {
    if (count <= 0) {
      throw new IllegalArgumentException("no samples: the measured operation never completed");
    }
    long[] copy = Arrays.copyOf(nanos, count);
    Arrays.sort(copy);
    return new Stats(copy);
  }

  /**
   * Statistics of all samples.
   *
   * @param nanos durations in nanoseconds; copied
   * @return the statistics
   */
  public static Stats of(long[] nanos) {
    return of(nanos, nanos.length);
  }

  /**
   * Number of samples.
   *
   * @return count
   */
  public int count() {
    return sorted.length;
  }

  /**
   * The nearest-rank percentile: the smallest sample with at least {@code p} percent of the samples
   * at or below it.
   *
   * @param p percent, 0 &lt; p &le; 100
   * @return nanoseconds
   */
  public long percentile(double p) {
    if (!(p > 0 && p <= 100)) {
      throw new IllegalArgumentException("percentile must be in (0, 100], got " + p);
    }
    // The epsilon keeps binary rounding (99.9 / 100 * 1000 = 999.0000000000001) off the rank.
    int rank = (int) Math.ceil(p / 100.0 * sorted.length - 1e-9);
    return sorted[Math.max(0, rank - 1)];
  }

  /**
   * The largest sample.
   *
   * @return nanoseconds
   */
  public long max() {
    return sorted[sorted.length - 1];
  }

  /**
   * The smallest sample.
   *
   * @return nanoseconds
   */
  public long min() {
    return sorted[0];
  }
}
