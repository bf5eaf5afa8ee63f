package io.github.deviceplugin4j.docs.backend;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.DeviceSink;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;

/** A backend that reacts to hotplug at once instead of polling: it watches {@code dev/}. */
// tag::hotplug[]
public class HotplugAccelBackend extends AccelBackend {

  private final Path dev;
  private WatchService watcher;

  public HotplugAccelBackend(Path root) {
    super(root);
    this.dev = root.resolve("dev");
  }

  @Override
  public Duration pollInterval() {
    return Duration.ZERO; // no polling: changes are pushed
  }

  @Override
  public void start(DeviceSink sink) throws IOException {
    watcher = FileSystems.getDefault().newWatchService();
    dev.register(
        watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
    Thread thread = new Thread(() -> watch(sink), "accel-hotplug");
    thread.setDaemon(true);
    thread.start();
  }

  private void watch(DeviceSink sink) {
    try {
      while (true) {
        WatchKey key = watcher.take();
        key.pollEvents();
        key.reset();
        sink.rescan(); // the core calls devices() soon; bursts coalesce
      }
    } catch (InterruptedException | ClosedWatchServiceException stopped) {
      // stop() closed the watcher
    }
  }

  @Override
  public void stop() {
    try {
      watcher.close();
    } catch (IOException e) {
      // nothing left to release
    }
  }
}
// end::hotplug[]
