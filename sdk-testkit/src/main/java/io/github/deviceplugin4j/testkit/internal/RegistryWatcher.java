package io.github.deviceplugin4j.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The kubelet's plugin watcher ({@code pkg/kubelet/pluginmanager/pluginwatcher/plugin_watcher.go},
 * the same shape from v1.26 to today): watches a directory and its subdirectories for socket files
 * and reports each new socket and each removed path.
 *
 * <p>It walks like the kubelet, bugs included. At start ({@code traversePluginDir}, a {@code
 * filepath.Walk}) it descends into <em>every</em> directory, hidden ones included, watches each,
 * and hands each socket found to the create handler, which ignores an entry only when its own name
 * starts with '.'; so {@code .hidden/s} is reported and {@code .hidden/.s} is not. At runtime
 * ({@code handleCreateEvent}) a created entry whose own name starts with '.' is ignored, a hidden
 * directory included (it is not watched then), and a created directory is walked as at start.
 */
public final class RegistryWatcher implements AutoCloseable {
  private final Path dir;
  private final Consumer<Path> onSocketCreated;
  private final Consumer<Path> onRemoved;
  private final Map<WatchKey, Path> keys = new HashMap<>();
  private WatchService service;
  private Thread thread;

  /**
   * Creates the watcher; {@link #start()} begins watching.
   *
   * @param dir the registry directory (created if missing)
   * @param onSocketCreated called with each new socket (on the watcher thread: hand off work)
   * @param onRemoved called with each removed path
   */
  public RegistryWatcher(Path dir, Consumer<Path> onSocketCreated, Consumer<Path> onRemoved) {
    this.dir = dir;
    this.onSocketCreated = onSocketCreated;
    this.onRemoved = onRemoved;
  }

  /** Creates the directory, reports existing sockets, and starts the watcher thread. */
  public void start() {
    try {
      Files.createDirectories(dir);
      service = dir.getFileSystem().newWatchService();
      watch(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot watch the plugins registry " + dir, e);
    }
    try {
      walkEntries(dir);
    } catch (IOException e) {
      // The kubelet logs "Failed to traverse plugin socket path" and watches on: an entry that
      // vanished mid-walk (a plugin's private directory renamed into place, say) ends the walk,
      // never the watcher.
    }
    thread = new Thread(this::run, "fake-kubelet-plugin-watcher");
    thread.setDaemon(true);
    thread.start();
  }

  /** {@code traversePluginDir}: watches the directory, then walks everything under it. */
  private void traverse(Path d) throws IOException {
    watch(d);
    walkEntries(d);
  }

  private void watch(Path d) throws IOException {
    keys.put(
        d.register(
            service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE),
        d);
  }

  private void walkEntries(Path d) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(d)) {
      for (Path p : entries) {
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
          traverse(p); // hidden or not: filepath.Walk descends into every directory
        } else if (SocketFiles.isSocket(p)) {
          handleCreate(p);
        }
      }
    }
  }

  /** {@code handleCreateEvent}: only the entry's own name is checked for a leading dot. */
  private void handleCreate(Path p) throws IOException {
    if (p.getFileName().toString().startsWith(".")) {
      return;
    }
    if (Files.isDirectory(p)) {
      traverse(p);
    } else if (SocketFiles.isSocket(p)) {
      onSocketCreated.accept(p);
    }
  }

  private void run() {
    try {
      while (true) {
        WatchKey key = service.take();
        Path base = keys.get(key);
        for (WatchEvent<?> event : key.pollEvents()) {
          if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
            rescan();
            continue;
          }
          if (base == null) {
            continue;
          }
          Path p = base.resolve((Path) event.context());
          try {
            if (event.kind() == StandardWatchEventKinds.ENTRY_CREATE) {
              handleCreate(p);
            } else {
              onRemoved.accept(p);
            }
          } catch (IOException | RuntimeException e) {
            // A file that vanished between the event and the stat: nothing to do.
          }
        }
        if (!key.reset()) {
          keys.remove(key);
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // closed
    }
  }

  private void rescan() {
    try {
      traverse(dir);
    } catch (IOException e) {
      // the directory is gone; nothing to report
    }
  }

  /**
   * Whether the watcher thread is alive.
   *
   * @return true while watching
   */
  public boolean isAlive() {
    return thread != null && thread.isAlive();
  }

  @Override
  public void close() {
    try {
      if (service != null) {
        service.close();
      }
    } catch (IOException e) {
      // ignore
    }
    if (thread != null) {
      try {
        thread.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
