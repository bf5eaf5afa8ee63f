package io.github.deviceplugin4j.core;

import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.core.internal.Threads;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/** Helpers shared by the tests. */
final class TestSupport {

  private TestSupport() {}

  /** Names of live threads the core started. */
  static List<String> coreThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.startsWith(Threads.PREFIX))
        .sorted()
        .toList();
  }

  /** Waits until no thread the core started is alive. */
  static void awaitNoCoreThreads() {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> org.assertj.core.api.Assertions.assertThat(coreThreads()).isEmpty());
  }

  /** Names of live threads, except Awaitility's own. */
  static java.util.Set<String> liveThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> !n.startsWith("awaitility"))
        .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
  }

  /** Waits until no thread is alive that was not alive at the baseline (gRPC's included). */
  static void awaitOnlyThreads(java.util.Set<String> baseline) {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> org.assertj.core.api.Assertions.assertThat(liveThreads()).isSubsetOf(baseline));
  }

  /** Socket files in a directory. */
  static List<Path> sockets(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(TestSupport::isSocket).sorted().toList();
    }
  }

  static boolean isSocket(Path p) {
    try {
      int mode =
          (Integer) Files.getAttribute(p, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
      return (mode & 0170000) == 0140000;
    } catch (IOException e) {
      return false;
    }
  }

  static String permissions(Path p) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }
}
