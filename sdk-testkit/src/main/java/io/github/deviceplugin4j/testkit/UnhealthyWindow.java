package io.github.deviceplugin4j.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A stretch of time in which a resource could not take new pods at the {@link FakeKubelet}: its
 * allocatable count was 0 or its current endpoint was stopped (so {@code Allocate} would fail),
 * after it had been available. From {@link FakeKubelet#unhealthyWindows(String, Mark)}.
 *
 * @param resource the resource name
 * @param startSeq the event ({@link KubeletEvent#seq()}) that made the resource unavailable
 * @param startNanos {@link System#nanoTime()} of that event
 * @param endSeq the event that made it available again; empty while the window is open
 * @param endNanos {@link System#nanoTime()} of that event; empty while the window is open
 * @param cause the detail of the event that opened the window
 */
public record UnhealthyWindow(
    String resource,
    long startSeq,
    long startNanos,
    OptionalLong endSeq,
    OptionalLong endNanos,
    String cause) {

  /**
   * Checks the components.
   *
   * @param resource see {@link #resource()}
   * @param startSeq see {@link #startSeq()}
   * @param startNanos see {@link #startNanos()}
   * @param endSeq see {@link #endSeq()}
   * @param endNanos see {@link #endNanos()}
   * @param cause see {@link #cause()}
   */
  public UnhealthyWindow {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(endSeq, "endSeq");
    Objects.requireNonNull(endNanos, "endNanos");
    Objects.requireNonNull(cause, "cause");
  }

  /**
   * Whether the resource is still unavailable.
   *
   * @return true when no event ended the window yet
   */
  public boolean open() {
    return endSeq.isEmpty();
  }

  /**
   * How long the window lasted, or has lasted so far when it is still open.
   *
   * @return the duration
   */
  public Duration duration() {
    return Duration.ofNanos(endNanos.orElse(System.nanoTime()) - startNanos);
  }
}
