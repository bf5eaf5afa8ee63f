package io.github.deviceplugin4j.core.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The rate limit of the transport's failure logs, on a clock the test moves. */
class TransportLogsTest {

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final TransportLogs.Limiter limiter = new TransportLogs.Limiter(60, now::get);

  @Test
  void aKindLogsOncePerPeriod_thenSaysHowManyItLeftOut() {
    assertThat(limiter.admit("a")).isZero();
    assertThat(limiter.admit("a")).isNegative();
    assertThat(limiter.admit("a")).isNegative();
    assertThat(limiter.admit("b")).as("another kind has its own budget").isZero();
    now.addAndGet(60);
    assertThat(limiter.admit("a")).isEqualTo(2);
    assertThat(limiter.admit("a")).isNegative();
  }

  @Test
  void kindsPastTheLimitShareOneBudget_soMemoryStaysBounded() {
    for (int i = 0; i < TransportLogs.MAX_KINDS; i++) {
      assertThat(limiter.admit("kind-" + i)).isZero();
    }
    assertThat(limiter.admit("one more")).isZero();
    assertThat(limiter.admit("and another"))
        .as("shares the budget of the first extra")
        .isNegative();
  }

  @Test
  void aCauseIsSummedUpOnOneLine_withItsOwnCauses() {
    Exception cause =
        new IllegalStateException("outer", new java.io.IOException("Connection reset by peer"));
    assertThat(TransportLogs.summary(cause))
        .isEqualTo("IllegalStateException: outer <- IOException: Connection reset by peer")
        .doesNotContain("\n");
  }
}
