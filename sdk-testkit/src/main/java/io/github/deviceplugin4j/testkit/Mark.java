package io.github.deviceplugin4j.testkit;

import java.time.Instant;

/**
 * A position in a {@link FakeKubelet}'s event log, in the spirit of MockWebServer's request queue:
 * everything recorded after the mark is "after" it, however fast it came. Take one with {@link
 * FakeKubelet#mark()} (or get one from {@link FakeKubelet#restart()}, taken before the restart
 * begins), then wait with {@link FakeKubelet#awaitRegistration(String, Mark, java.time.Duration)}
 * or {@link FakeKubelet#awaitEvent(Mark, java.util.function.Predicate, java.time.Duration)}.
 *
 * <pre>{@code
 * Mark m = kubelet.restart();
 * Registration again = kubelet.awaitRegistration("example.com/fpga", m, Duration.ofSeconds(5));
 * }</pre>
 *
 * @param seq the sequence number of the last event recorded when the mark was taken (0 before any)
 * @param nanos {@link System#nanoTime()} when the mark was taken
 * @param time the wall-clock time when the mark was taken
 */
public record Mark(long seq, long nanos, Instant time) {

  /**
   * Checks the components.
   *
   * @param seq see {@link #seq()}
   * @param nanos see {@link #nanos()}
   * @param time see {@link #time()}
   */
  public Mark {
    if (seq < 0) {
      throw new IllegalArgumentException("seq must not be negative: " + seq);
    }
    java.util.Objects.requireNonNull(time, "time");
  }
}
