package io.github.deviceplugin4j.benchmarks;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting for a condition with a deadline, checking every 50 µs (measurements stay precise). */
public final class Waits {

  private Waits() {}

  /**
   * Waits until the condition holds.
   *
   * @param what names the condition in the error
   * @param timeout how long at most
   * @param condition the condition
   * @return {@link System#nanoTime()} when the condition was seen to hold
   * @throws IllegalStateException on timeout, with the text of {@code detail}
   */
  public static long until(String what, Duration timeout, BooleanSupplier condition) {
    return until(what, timeout, condition, () -> "");
  }

  /**
   * Waits until the condition holds.
   *
   * @param what names the condition in the error
   * @param timeout how long at most
   * @param condition the condition
   * @param detail what to add to the error (e.g. the fake kubelet's event log)
   * @return {@link System#nanoTime()} when the condition was seen to hold
   * @throws IllegalStateException on timeout
   */
  public static long until(
      String what, Duration timeout, BooleanSupplier condition, Supplier<String> detail) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return System.nanoTime();
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "timed out after "
                + timeout.toMillis()
                + " ms waiting for "
                + what
                + "\n"
                + detail.get());
      }
      LockSupport.parkNanos(50_000);
    }
  }
}
