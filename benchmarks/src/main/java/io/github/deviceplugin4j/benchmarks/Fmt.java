package io.github.deviceplugin4j.benchmarks;

import java.util.Locale;

/** Number formats of the report. */
public final class Fmt {

  private Fmt() {}

  /**
   * Nanoseconds as microseconds, no decimals above 100.
   *
   * @param nanos duration
   * @return text
   */
  public static String us(long nanos) {
    double us = nanos / 1_000.0;
    return us >= 100
        ? String.format(Locale.ROOT, "%.0f", us)
        : String.format(Locale.ROOT, "%.1f", us);
  }

  /**
   * Nanoseconds as milliseconds with two decimals (one above 100).
   *
   * @param nanos duration
   * @return text
   */
  public static String ms(long nanos) {
    double ms = nanos / 1_000_000.0;
    return ms >= 100
        ? String.format(Locale.ROOT, "%.0f", ms)
        : String.format(Locale.ROOT, "%.2f", ms);
  }

  /**
   * Bytes as MiB with one decimal.
   *
   * @param bytes size
   * @return text
   */
  public static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f", bytes / (1024.0 * 1024.0));
  }

  /**
   * A ratio with two decimals and a times sign.
   *
   * @param ratio value
   * @return text
   */
  public static String ratio(double ratio) {
    return String.format(Locale.ROOT, "%.2f×", ratio);
  }

  /**
   * A count with thousands separators.
   *
   * @param n count
   * @return text
   */
  public static String count(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }
}
