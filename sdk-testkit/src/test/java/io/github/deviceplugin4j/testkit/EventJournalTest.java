package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The journal on its own: numbering, marks, waits and availability windows, on a fake clock. */
class EventJournalTest {
  static final String RES = "example.com/foo";

  private final AtomicLong nanos = new AtomicLong(1_000);

  private EventJournal journal(List<Consumer<KubeletEvent>> listeners) {
    return new EventJournal("/p", nanos::get, () -> Instant.EPOCH, listeners);
  }

  private EventJournal journal() {
    return journal(List.of());
  }

  @Test
  void eventsAreNumberedFromOneAndStampedWithTheInjectedClock() {
    EventJournal j = journal();
    KubeletEvent first = j.record(Kind.START, "", Outcome.INFO, "serving");
    nanos.addAndGet(500);
    KubeletEvent second = j.record(Kind.REGISTER, RES, Outcome.OK, "endpoint=a.sock");

    assertThat(first.seq()).isEqualTo(1);
    assertThat(second.seq()).isEqualTo(2);
    assertThat(second.nanos() - first.nanos()).isEqualTo(500);
    assertThat(j.events()).containsExactly(first, second);
  }

  @Test
  void eventsAfterAMarkAreExactlyTheLaterOnes() {
    EventJournal j = journal();
    j.record(Kind.START, "", Outcome.INFO, "serving");
    Mark m = j.mark();
    KubeletEvent later = j.record(Kind.REGISTER, RES, Outcome.OK, "");

    assertThat(m.seq()).isEqualTo(1);
    assertThat(j.events(m)).containsExactly(later);
    assertThat(later.isAfter(m)).isTrue();
  }

  @Test
  void awaitEventAfterAMarkSkipsOlderMatchesAndSeesOneRecordedByAnotherThread() throws Exception {
    EventJournal j = journal();
    j.record(Kind.REGISTER, RES, Outcome.OK, "old");
    Mark m = j.mark();
    CountDownLatch waiting = new CountDownLatch(1);
    Thread recorder =
        new Thread(
            () -> {
              try {
                waiting.await(5, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              j.record(Kind.REGISTER, RES, Outcome.OK, "new");
            });
    recorder.start();
    waiting.countDown();

    KubeletEvent e = j.awaitEvent(m, ev -> ev.kind() == Kind.REGISTER, Duration.ofSeconds(60));
    recorder.join();

    assertThat(e.detail()).isEqualTo("new");
  }

  @Test
  void awaitWakesOnTouchWhenStateChangesWithoutAnEvent() throws Exception {
    EventJournal j = journal();
    AtomicLong state = new AtomicLong();
    Thread changer =
        new Thread(
            () -> {
              state.set(1);
              j.touch();
            });
    changer.start();

    Long seen = j.await("state 1", Duration.ofSeconds(5), () -> state.get() == 1 ? 1L : null);
    changer.join();

    assertThat(seen).isEqualTo(1L);
  }

  @Test
  void awaitTimesOutWithWhatItWaitedForAndTheEventLog() {
    EventJournal j = journal();
    j.record(Kind.START, "", Outcome.INFO, "serving /p/kubelet.sock");

    assertThatThrownBy(() -> j.await("a registration", Duration.ofMillis(20), () -> null))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("waiting for a registration")
        .hasMessageContaining("fake kubelet event log (/p)")
        .hasMessageContaining("#1")
        .hasMessageContaining("START INFO: serving /p/kubelet.sock");
  }

  @Test
  void awaitQuietlyReportsFalseOnTimeout() {
    assertThat(journal().awaitQuietly(Duration.ofMillis(10), () -> false)).isFalse();
    assertThat(journal().awaitQuietly(Duration.ofMillis(10), () -> true)).isTrue();
  }

  @Test
  void listenersSeeEveryEventInOrderAndOneThatThrowsBreaksNothing() {
    List<Long> seen = new ArrayList<>();
    EventJournal j =
        journal(
            List.of(
                e -> {
                  throw new IllegalStateException("bad listener");
                },
                e -> seen.add(e.seq())));
    j.record(Kind.START, "", Outcome.INFO, "");
    j.record(Kind.STOP, "", Outcome.INFO, "");

    assertThat(seen).containsExactly(1L, 2L);
  }

  @Test
  void healthSamplesThatChangeNothingRecordNoEvent() {
    EventJournal j = journal();
    j.sampleHealth(RES, 2, 2, false, "/p/a.sock", "registered");
    j.sampleHealth(RES, 2, 2, false, "/p/a.sock", "device list");

    assertThat(j.events()).hasSize(1);
    KubeletEvent e = j.events().get(0);
    assertThat(e.kind()).isEqualTo(Kind.RESOURCE_HEALTH);
    assertThat(e.allocatable()).hasValue(2);
    assertThat(e.devices()).hasValue(2);
    assertThat(e.detail()).isEqualTo("allocatable=2 capacity=2: registered");
  }

  @Test
  void anOutageBetweenTwoAvailableSamplesIsOneClosedWindow() {
    EventJournal j = journal();
    Mark before = j.mark();
    j.sampleHealth(RES, 2, 2, false, "/p/a.sock", "registered");
    nanos.addAndGet(1_000_000);
    j.sampleHealth(RES, 0, 2, true, "/p/a.sock", "stream ended");
    nanos.addAndGet(4_000_000);
    j.sampleHealth(RES, 2, 2, false, "/p/b.sock", "registered again");

    List<UnhealthyWindow> windows = j.unhealthyWindows(RES, before);
    assertThat(windows).hasSize(1);
    UnhealthyWindow w = windows.get(0);
    assertThat(w.open()).isFalse();
    assertThat(w.duration()).isEqualTo(Duration.ofMillis(4));
    assertThat(w.cause()).isEqualTo("stream ended");
  }

  @Test
  void aStoppedEndpointIsAnOutageEvenWithHealthyDevices() {
    EventJournal j = journal();
    Mark before = j.mark();
    j.sampleHealth(RES, 2, 2, false, "/p/a.sock", "registered");
    j.sampleHealth(RES, 2, 2, true, "/p/a.sock", "endpoint stopped, a list came later");

    List<UnhealthyWindow> windows = j.unhealthyWindows(RES, before);
    assertThat(windows).hasSize(1);
    assertThat(windows.get(0).open()).isTrue();
    assertThat(windows.get(0).cause()).isEqualTo("endpoint stopped, a list came later");
  }

  @Test
  void windowsThatBeganBeforeTheMarkAreLeftOut() {
    EventJournal j = journal();
    j.sampleHealth(RES, 1, 1, false, "", "registered");
    j.sampleHealth(RES, 0, 1, true, "", "first outage");
    Mark m = j.mark();
    j.sampleHealth(RES, 1, 1, false, "", "back");
    j.sampleHealth(RES, 0, 1, true, "", "second outage");

    assertThat(j.unhealthyWindows(RES, m))
        .singleElement()
        .satisfies(
            w -> {
              assertThat(w.cause()).isEqualTo("second outage");
              assertThat(w.open()).isTrue();
            });
  }

  @Test
  void aResourceNeverAvailableHasNoWindowAndAForgottenOneStartsAfresh() {
    EventJournal j = journal();
    Mark start = j.mark();
    j.sampleHealth(RES, 0, 0, true, "", "known from the checkpoint only");
    assertThat(j.unhealthyWindows(RES, start)).isEmpty();

    j.sampleHealth(RES, 1, 1, false, "", "registered");
    j.sampleHealth(RES, 0, 1, true, "", "disconnected");
    j.forgetHealth(RES);
    assertThat(j.unhealthyWindows(RES, start)).isEmpty();
    assertThat(j.unhealthyWindows("example.com/other", start)).isEmpty();
  }
}
