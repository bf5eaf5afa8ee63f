package io.github.deviceplugin4j.examples.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The training run completes with no kubelet and no hardware, through every step (it throws at the
 * first that fails), and leaves no socket and no thread of its own behind.
 */
class CdsTrainingTest {

  @TempDir Path tmp;

  @Test
  void walksStartCallsAndBothRegistrationModesWithNoKubeletAndCleansUp() throws Exception {
    long threadsBefore = liveCoreThreads();
    CdsTraining.run(tmp);
    try (Stream<Path> files = Files.walk(tmp)) {
      assertThat(files.filter(p -> p.toString().endsWith(".sock") && !isLink(p)))
          .as("sockets left behind")
          .isEmpty();
    }
    // The legacy plugin was refused by "kubelet.sock" (its own socket), then registered with the
    // training kubelet, again after its restart; the watcher plugin was told it is registered:
    // every step is awaited inside run(); here, nothing keeps running.
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .until(() -> liveCoreThreads() <= threadsBefore);
  }

  private static boolean isLink(Path p) {
    return Files.isSymbolicLink(p);
  }

  private static long liveCoreThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && !t.isDaemon())
        .filter(t -> t.getName().startsWith("deviceplugin4j-"))
        .count();
  }
}
