package io.github.deviceplugin4j.dra.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What {@link MockApiServers#destroy} lets through, on a server whose shutdown fails on demand. */
class MockApiServersTest {

  /** A mock server (never started) whose shutdown throws what the real one throws. */
  static final class FailingShutdown extends KubernetesMockServer {
    final RuntimeException failure;
    final AtomicInteger destroys = new AtomicInteger();

    FailingShutdown(RuntimeException failure) {
      this.failure = failure;
    }

    @Override
    public void destroy() {
      destroys.incrementAndGet();
      throw failure;
    }
  }

  @Test
  void aShutdownCutShortByTheMocksOwnLimitIsNotThrown() {
    // What fabric8's MockWebServer.shutdown throws when its 10 s wait for the server expires.
    FailingShutdown server =
        new FailingShutdown(
            new IllegalStateException("Unable to close MockWebServer", new TimeoutException()));
    MockApiServers.destroy(server);
    assertThat(server.destroys).hasValue(1);
  }

  @Test
  void anyOtherShutdownFailureIsThrown() {
    IllegalStateException other = new IllegalStateException("shutdown() before start()");
    FailingShutdown server = new FailingShutdown(other);
    assertThatThrownBy(() -> MockApiServers.destroy(server)).isSameAs(other);
    RuntimeException unexpected = new RuntimeException("boom");
    assertThatThrownBy(() -> MockApiServers.destroy(new FailingShutdown(unexpected)))
        .isSameAs(unexpected);
  }
}
