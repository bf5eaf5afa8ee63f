package io.github.deviceplugin4j.benchmarks.process;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Waits until a process is idle in memory: its {@code VmRSS} stayed within {@link #BAND_BYTES} for
 * {@link #WINDOW} (read every 200 ms), at most {@link #MAX_WAIT}. Observable instead of a fixed
 * pause: start-up work still running (class loading, JIT compilation, a first GC) shows as RSS
 * growth.
 *
 * @param status the last reading
 * @param waitedNanos how long it took
 * @param settled false when {@link #MAX_WAIT} passed first
 */
record Idle(ProcStatus status, long waitedNanos, boolean settled) {

  /** How long RSS must stay flat. */
  static final Duration WINDOW = Duration.ofSeconds(1);

  /** How flat: 0.5 MiB. */
  static final long BAND_BYTES = 512 * 1024;

  /** The longest wait. */
  static final Duration MAX_WAIT = Duration.ofSeconds(15);

  private static final Duration PERIOD = Duration.ofMillis(200);

  /** How the table notes describe it. */
  static final String DESCRIPTION =
      "idle = VmRSS flat within 0.5 MiB for 1 s (read every 200 ms, at most 15 s)";

  static Idle await(JavaProcess p) throws InterruptedException {
    long start = System.nanoTime();
    Deque<long[]> window = new ArrayDeque<>();
    while (true) {
      ProcStatus s = p.status();
      long now = System.nanoTime();
      window.addLast(new long[] {now, s.rssBytes()});
      while (now - window.peekFirst()[0] > WINDOW.toNanos() + PERIOD.toNanos() / 2) {
        window.removeFirst();
      }
      long min = window.stream().mapToLong(x -> x[1]).min().orElseThrow();
      long max = window.stream().mapToLong(x -> x[1]).max().orElseThrow();
      boolean full = now - window.peekFirst()[0] >= WINDOW.toNanos();
      if (full && max - min <= BAND_BYTES) {
        return new Idle(s, now - start, true);
      }
      if (now - start >= MAX_WAIT.toNanos()) {
        return new Idle(s, now - start, false);
      }
      if (p.waitFor(PERIOD)) {
        p.checkAlive("read its idle memory");
      }
    }
  }
}
