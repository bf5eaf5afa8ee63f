package io.github.deviceplugin4j.testkit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.LogCapture;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The transport's close order, with a dial held where it used to race the executor's shutdown. */
class UdsTransportTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void closeWaitsForADialBeforeStoppingTheExecutorItsCallbacksRunOn() throws Exception {
    LogCapture logged = LogCapture.start();
    UdsTransport transport = new UdsTransport("t");
    try {
      // Nothing serves the socket: the first attempt fails, and the dial runs onFirstFailure just
      // before it registers its next state callback. It waits there until close() is under way.
      ManagedChannel channel = transport.channel(dir.resolve("missing.sock"));
      CountDownLatch failed = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Boolean> dialled = new CompletableFuture<>();
      Thread dialling =
          new Thread(
              () -> {
                try {
                  dialled.complete(
                      transport.dial(
                          channel,
                          WAIT,
                          () -> {
                            failed.countDown();
                            awaitQuietly(release);
                          }));
                } catch (Throwable t) {
                  dialled.completeExceptionally(t);
                }
              });
      dialling.start();
      assertThat(failed.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("first dial failed").isTrue();

      Thread closing = new Thread(transport::close);
      closing.start();
      // Release the dial once close() has shut the channel down and is waiting on something:
      // for the dial (this transport), or for the executor it has already stopped (the old order,
      // where the dial's callback was then rejected).
      Awaitility.await()
          .atMost(WAIT)
          .until(
              () ->
                  transport.executor().isShutdown()
                      || (channel.isTerminated() && waiting(closing)));
      release.countDown();

      assertThat(dialled.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("dial result").isFalse();
      closing.join(WAIT.toMillis());
      assertThat(closing.isAlive()).as("close() returned").isFalse();
      assertThat(transport.isTerminated()).isTrue();
      assertThat(transport.liveThreads()).isEmpty();
      assertThat(transport.channels()).allMatch(ManagedChannel::isTerminated);
    } finally {
      logged.close();
      transport.close();
    }
    assertThat(logged.rejectedExecutions())
        .as("records of an executor used after shutdown")
        .isEmpty();
  }

  @Test
  void aChannelMadeAfterCloseBeganIsAlreadyShutDown() {
    UdsTransport transport = new UdsTransport("t");
    transport.close();
    ManagedChannel late = transport.channel(dir.resolve("x.sock"));
    assertThat(late.isShutdown()).isTrue();
    Awaitility.await().atMost(WAIT).until(late::isTerminated);
  }

  private static boolean waiting(Thread t) {
    Thread.State s = t.getState();
    return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING;
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
