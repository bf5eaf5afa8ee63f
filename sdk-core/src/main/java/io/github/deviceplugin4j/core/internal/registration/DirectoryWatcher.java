package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Threads;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * Watches directories for files being created and deleted (inotify through the JDK's {@link
 * WatchService}), on one thread. When events were lost (overflow) or a watched directory was
 * deleted and comes back, the listener is told to rescan. The thread also wakes every {@code
 * recheck} to notice invalid watches and directories that came back.
 */
public final class DirectoryWatcher implements AutoCloseable {

  private static final Logger LOG = Loggers.named("DirectoryWatcher");

  /** Receives the watcher's events, on the watcher thread. */
  public interface Listener {
    /** A file was created (or renamed into the directory). */
    void created(Path dir, String name);

    /** A file was deleted (or renamed away). */
    void deleted(Path dir, String name);

    /** Events may have been missed in a directory; check its state. */
    void rescan(Path dir);
  }

  private final WatchService service;
  private final Listener listener;
  private final long recheckNanos;
  private final Map<WatchKey, Path> keys = new ConcurrentHashMap<>();
  private final Map<WatchKey, Object> identities = new ConcurrentHashMap<>();
  // Only touched by the constructor and then the watcher thread.
  private final Set<Path> missing = new LinkedHashSet<>();
  private final Thread thread;
  private volatile boolean closed;

  /** Starts watching: {@link #prepare} and {@link #start} in one. */
  public DirectoryWatcher(List<Path> dirs, Listener listener, Duration recheck) throws IOException {
    this(dirs, listener, recheck, true);
  }

  private DirectoryWatcher(List<Path> dirs, Listener listener, Duration recheck, boolean start)
      throws IOException {
    this.service = FileSystems.getDefault().newWatchService();
    this.listener = listener;
    this.recheckNanos = recheck.toNanos();
    for (Path dir : new LinkedHashSet<>(dirs)) {
      if (!register(dir)) {
        missing.add(dir);
      }
    }
    this.thread = Threads.factory("watch", true).newThread(this::loop);
    if (start) {
      thread.start();
    }
  }

  /**
   * Watches the directories from now on but delivers nothing until {@link #start}: what changes in
   * between (a socket deleted while the first registration is under way, say) is delivered then.
   * Callers that create files and react to their deletion prepare the watcher before they create
   * them, or a deletion in that window would go unnoticed. Directories missing now are watched once
   * they exist, looked for every {@code recheck}. Throws an IOException when the watch service
   * cannot be created.
   */
  public static DirectoryWatcher prepare(List<Path> dirs, Listener listener, Duration recheck)
      throws IOException {
    return new DirectoryWatcher(dirs, listener, recheck, false);
  }

  /** Starts delivering events, those since {@link #prepare} first; does nothing when started. */
  public synchronized void start() {
    if (!closed && thread.getState() == Thread.State.NEW) {
      thread.start();
    }
  }

  private boolean register(Path dir) {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try {
      Object identity = identity(dir);
      WatchKey key =
          dir.register(
              service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
      keys.put(key, dir);
      if (identity != null) {
        identities.put(key, identity);
      }
      return true;
    } catch (IOException | ClosedWatchServiceException e) {
      LOG.debug("cannot watch {} yet: {}", dir, e.toString());
      return false;
    }
  }

  private void loop() {
    while (!closed) {
      WatchKey key;
      try {
        key = service.poll(recheckNanos, TimeUnit.NANOSECONDS);
      } catch (ClosedWatchServiceException | InterruptedException e) {
        return;
      }
      if (key != null) {
        handle(key);
      }
      // Cheap safety net on every wake-up: invalid keys (directory deleted without a signal), a
      // path that now names another directory (the watched one was renamed away), and
      // directories that came back.
      for (Map.Entry<WatchKey, Path> e : keys.entrySet()) {
        WatchKey k = e.getKey();
        if (!k.isValid() || !java.util.Objects.equals(identities.get(k), identity(e.getValue()))) {
          k.cancel();
          lost(k, e.getValue());
        }
      }
      if (!missing.isEmpty()) {
        rewatchMissing();
      }
    }
  }

  private void handle(WatchKey key) {
    Path dir = keys.get(key);
    for (WatchEvent<?> event : key.pollEvents()) {
      if (dir == null) {
        continue;
      }
      try {
        dispatch(dir, event);
      } catch (RuntimeException e) {
        LOG.error("error handling a file event in {}", dir, e);
      }
    }
    if (!key.reset() && dir != null) {
      lost(key, dir);
    }
  }

  private void lost(WatchKey key, Path dir) {
    identities.remove(key);
    if (keys.remove(key) == null || closed) {
      return;
    }
    LOG.warn("Watched directory {} disappeared; watching for it to come back", dir);
    missing.add(dir);
    safeRescan(dir);
    rewatchMissing();
  }

  private void rewatchMissing() {
    List<Path> back = missing.stream().filter(this::register).toList();
    missing.removeAll(back);
    for (Path dir : back) {
      LOG.info("Watching {} again", dir);
      safeRescan(dir);
    }
  }

  private static Object identity(Path dir) {
    try {
      return Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  private void dispatch(Path dir, WatchEvent<?> event) {
    WatchEvent.Kind<?> kind = event.kind();
    if (kind == StandardWatchEventKinds.OVERFLOW) {
      LOG.debug("watch overflow in {}; rescanning", dir);
      listener.rescan(dir);
      return;
    }
    String name = String.valueOf(event.context());
    if (kind == StandardWatchEventKinds.ENTRY_CREATE) {
      listener.created(dir, name);
    } else if (kind == StandardWatchEventKinds.ENTRY_DELETE) {
      listener.deleted(dir, name);
    }
  }

  private void safeRescan(Path dir) {
    try {
      listener.rescan(dir);
    } catch (RuntimeException e) {
      LOG.error("error rescanning {}", dir, e);
    }
  }

  /** Whether a directory is currently watched (its watch is valid). */
  public boolean isWatching(Path dir) {
    return keys.entrySet().stream().anyMatch(e -> e.getValue().equals(dir) && e.getKey().isValid());
  }

  @Override
  public synchronized void close() {
    closed = true;
    try {
      service.close();
    } catch (IOException e) {
      LOG.debug("closing watch service: {}", e.toString());
    }
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
