package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.RateLimitedLog;
import io.github.deviceplugin4j.core.internal.registration.Backoff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;

/** Backoff and rate-limited logging: the pieces that keep retries forever polite. */
class EngineInternalsTest {

  @Test
  void backoffGrowsExponentiallyWithJitterUpToItsCapAndResets() {
    Backoff b = new Backoff(Duration.ofMillis(10), Duration.ofMillis(100));
    List<Long> delays = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      delays.add(b.next().toMillis());
    }
    assertThat(delays.get(0)).isBetween(8L, 12L);
    assertThat(delays.get(1)).isBetween(16L, 24L);
    assertThat(delays.get(2)).isBetween(32L, 48L);
    assertThat(delays.subList(4, 8)).allSatisfy(d -> assertThat(d).isBetween(80L, 120L));
    b.reset();
    assertThat(b.next().toMillis()).isBetween(8L, 12L);
  }

  /** Collects log lines as "LEVEL message". */
  static final class Capture extends LegacyAbstractLogger {
    final List<String> lines = new ArrayList<>();

    @Override
    protected String getFullyQualifiedCallerName() {
      return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(
        Level level, Marker marker, String msg, Object[] args, Throwable t) {
      lines.add(level + " " + msg);
    }

    @Override
    public boolean isTraceEnabled() {
      return true;
    }

    @Override
    public boolean isDebugEnabled() {
      return true;
    }

    @Override
    public boolean isInfoEnabled() {
      return true;
    }

    @Override
    public boolean isWarnEnabled() {
      return true;
    }

    @Override
    public boolean isErrorEnabled() {
      return true;
    }
  }

  @Test
  void repeatedFailuresLogOneWarningPerPeriodAndTheRestAtDebug() {
    Capture capture = new Capture();
    RateLimitedLog log = new RateLimitedLog(capture, Duration.ofHours(1));
    for (int i = 0; i < 50; i++) {
      log.warn("kubelet unreachable", null);
    }
    assertThat(capture.lines.stream().filter(l -> l.startsWith("WARN"))).hasSize(1);
    assertThat(capture.lines.stream().filter(l -> l.startsWith("DEBUG"))).hasSize(49);
    assertThat(log.reset()).isTrue();
    log.warn("kubelet unreachable", null);
    assertThat(capture.lines.get(capture.lines.size() - 1)).startsWith("WARN");
  }

  @Test
  void afterThePeriodTheNextWarningCountsWhatWasSuppressed() {
    Capture capture = new Capture();
    long[] now = {0};
    RateLimitedLog log = new RateLimitedLog(capture, Duration.ofMinutes(1), () -> now[0]);
    log.warn("refused", null);
    now[0] += Duration.ofSeconds(30).toNanos();
    log.warn("refused", null);
    log.warn("refused", null);
    now[0] += Duration.ofSeconds(31).toNanos();
    log.warn("refused", null);
    assertThat(capture.lines)
        .containsExactly(
            "WARN refused",
            "DEBUG refused",
            "DEBUG refused",
            "WARN refused (2 similar messages suppressed)");
  }
}
