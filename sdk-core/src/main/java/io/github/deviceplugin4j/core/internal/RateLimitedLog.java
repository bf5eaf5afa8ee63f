package io.github.deviceplugin4j.core.internal;

import java.time.Duration;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Logs a repeated failure at WARN the first time and then at most once per period, saying how many
 * similar messages were suppressed; the rest go to DEBUG. Thread-safe.
 */
public final class RateLimitedLog {

  private final Logger log;
  private final long periodNanos;
  private final LongSupplier clock;
  private long lastWarn;
  private boolean warned;
  private int suppressed;

  /** A rate-limited log: {@code period} is the minimum time between two WARN lines. */
  public RateLimitedLog(Logger log, Duration period) {
    this(log, period, System::nanoTime);
  }

  /** A rate-limited log with its own clock, in monotonic nanoseconds. */
  public RateLimitedLog(Logger log, Duration period, LongSupplier nanoClock) {
    this.log = log;
    this.periodNanos = period.toNanos();
    this.clock = nanoClock;
  }

  /**
   * Logs a failure; {@code message} has no placeholders, and the optional {@code cause} goes with
   * the WARN line only at DEBUG level.
   */
  public void warn(String message, Throwable cause) {
    long now = clock.getAsLong();
    int skipped;
    synchronized (this) {
      if (warned && now - lastWarn < periodNanos) {
        suppressed++;
        skipped = -1;
      } else {
        skipped = suppressed;
        suppressed = 0;
        warned = true;
        lastWarn = now;
      }
    }
    if (skipped < 0) {
      log.debug(message, cause);
      return;
    }
    String suffix = skipped > 0 ? " (" + skipped + " similar messages suppressed)" : "";
    if (cause != null && log.isDebugEnabled()) {
      log.warn(message + suffix, cause);
    } else {
      log.warn(message + suffix);
    }
  }

  /**
   * Forgets earlier failures so the next one logs at WARN again; true when any failure was logged
   * since the last reset.
   */
  public synchronized boolean reset() {
    boolean had = warned;
    warned = false;
    suppressed = 0;
    return had;
  }
}
