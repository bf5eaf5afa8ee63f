package io.github.deviceplugin4j.core.internal.registration;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/** Capped exponential backoff with ±20% jitter. Not thread-safe. */
public final class Backoff {

  private final long initialNanos;
  private final long maxNanos;
  private long nextNanos;

  /** A backoff whose first delay is {@code initial}, capped at {@code max}. */
  public Backoff(Duration initial, Duration max) {
    this.initialNanos = Math.max(1, initial.toNanos());
    this.maxNanos = Math.max(initialNanos, max.toNanos());
    this.nextNanos = initialNanos;
  }

  /** The next delay, with jitter, growing up to the cap. */
  public Duration next() {
    long base = nextNanos;
    nextNanos = Math.min(maxNanos, nextNanos * 2);
    double jitter = 0.8 + ThreadLocalRandom.current().nextDouble() * 0.4;
    return Duration.ofNanos(Math.max(1, (long) (base * jitter)));
  }

  /** Back to the initial delay. */
  public void reset() {
    nextNanos = initialNanos;
  }
}
