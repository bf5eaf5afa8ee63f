package io.github.deviceplugin4j.core.internal.registration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher's two phases: a prepared watcher sees what changes before it is started. The host
 * serves its sockets between the two; a socket deleted in that window (during the first Register)
 * used to go unnoticed until the safety check, because the watch began after the sockets existed.
 */
class DirectoryWatcherTest {

  @TempDir Path dir;

  private final List<String> events = new CopyOnWriteArrayList<>();

  private final DirectoryWatcher.Listener listener =
      new DirectoryWatcher.Listener() {
        @Override
        public void created(Path d, String name) {
          events.add("created " + name);
        }

        @Override
        public void deleted(Path d, String name) {
          events.add("deleted " + name);
        }

        @Override
        public void rescan(Path d) {
          events.add("rescan");
        }
      };

  @Test
  void changesBetweenPrepareAndStartAreDeliveredOnStart() throws Exception {
    Path early = Files.createFile(dir.resolve("early.sock"));
    try (DirectoryWatcher watcher =
        DirectoryWatcher.prepare(List.of(dir), listener, Duration.ofSeconds(30))) {
      Files.delete(early);
      Files.createFile(dir.resolve("late.sock"));
      assertThat(events).as("nothing is delivered before start()").isEmpty();

      watcher.start();
      watcher.start(); // a second start is harmless

      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> events.containsAll(List.of("deleted early.sock", "created late.sock")));
      assertThat(events).containsSubsequence("deleted early.sock", "created late.sock");
    }
  }
}
