package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many resources in one host share its threads; periodic work does not multiply them. */
class ManyResourcesTest {

  static final int RESOURCES = 40;

  @TempDir Path tmp;

  @Test
  void safetyChecksOfManyResourcesDoNotStartAThreadEach() {
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"))) {
      DevicePluginHost.Builder b =
          DevicePluginHost.builder()
              .pluginDir(kubelet.pluginDir())
              .registrationMode(RegistrationMode.LEGACY)
              // 40 checks spread over 1 s: one every 25 ms, which one worker keeps up with even
              // on a starved machine; submitted all at once they used to need 40.
              .safetyCheckInterval(Duration.ofSeconds(1));
      for (int i = 0; i < RESOURCES; i++) {
        b.backend(TestBackend.of("example.com/r" + i, "d0"));
      }
      try (DevicePluginHost host = b.start()) {
        await().atMost(Duration.ofSeconds(30)).until(host::isReady);
        // Registering 40 resources at once needs workers; idle ones end after 5 s.
        await().atMost(Duration.ofSeconds(60)).until(() -> workers() < RESOURCES / 4);
        // Then, across 5 safety periods, checks spread over the period keep it that way: 40
        // checks submitted at once used to start a worker thread each, every period.
        AtomicInteger most = new AtomicInteger();
        await()
            .during(Duration.ofSeconds(5))
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(20))
            .until(
                () -> {
                  most.accumulateAndGet(workers(), Math::max);
                  return host.isReady();
                });
        // Bound: checks submitted all at once used to start a worker per resource (40); a loaded
        // runner keeps a few more of the spread-out ones alive at a time.
        assertThat(most.get()).as("most worker threads alive at once").isLessThan(RESOURCES / 2);
      }
    }
  }

  private static int workers() {
    return (int)
        Thread.getAllStackTraces().keySet().stream()
            .filter(Thread::isAlive)
            .filter(t -> t.getName().startsWith("deviceplugin4j-worker-"))
            .count();
  }
}
