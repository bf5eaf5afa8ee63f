package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Threads;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;

/**
 * The serving lease of one resource on a node: an exclusive lock ({@code flock}) on a file in a
 * hidden directory of the plugin directory, held by the instance that serves the resource.
 *
 * <p>It orders a handover between two processes of one resource (a DaemonSet rolling update with
 * surge): the new instance finds the lease held, serves its own socket, registers (the newest
 * registration wins at the kubelet) and waits for the lease. The old one releases it only after its
 * servers, and so its connections to the kubelet, are closed; the kernel releases it too when the
 * process dies, even on SIGKILL. The new instance then registers again at once, because the old
 * connection's end made the kubelet disconnect the resource.
 *
 * <p>The kubelet deletes files in the plugin directory when it starts (v1.26: every file; later:
 * sockets only) but not directories, so the lock file lives in {@code .deviceplugin4j/}. Java file
 * locks belong to the whole JVM, so instances in one JVM (tests) also wait on each other here.
 */
final class Lease implements AutoCloseable {

  private static final Logger LOG = Loggers.named("Lease");

  /** The directory of lock files, inside the plugin directory. */
  static final String DIR = ".deviceplugin4j";

  private static final Map<Path, Lease> HELD_IN_THIS_JVM = new ConcurrentHashMap<>();

  private final Path path;
  private final FileChannel channel;
  private final CompletableFuture<Void> released = new CompletableFuture<>();
  private volatile FileLock lock;
  private volatile boolean closed;

  private Lease(Path path, FileChannel channel) {
    this.path = path;
    this.channel = channel;
  }

  /** Opens the lease file of a resource's canonical socket name (does not lock it). */
  static Lease open(Path pluginDir, String socketName) throws IOException {
    Path dir = pluginDir.resolve(DIR);
    if (!Files.isDirectory(dir)) {
      try {
        Files.createDirectory(
            dir,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      } catch (FileAlreadyExistsException createdMeanwhile) {
        // another instance created it
      }
    }
    Path path = dir.resolve(socketName + ".lock").toAbsolutePath().normalize();
    FileChannel channel =
        FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    return new Lease(path, channel);
  }

  Path path() {
    return path;
  }

  boolean held() {
    return lock != null;
  }

  /** Takes the lease if nobody holds it; true when this instance holds it now. */
  boolean tryAcquire() throws IOException {
    synchronized (HELD_IN_THIS_JVM) {
      if (HELD_IN_THIS_JVM.containsKey(path)) {
        return false;
      }
      FileLock l;
      try {
        l = channel.tryLock();
      } catch (OverlappingFileLockException sameJvm) {
        return false;
      }
      if (l == null) {
        return false;
      }
      lock = l;
      HELD_IN_THIS_JVM.put(path, this);
      return true;
    }
  }

  /**
   * Waits for the lease on a daemon thread (named after {@code name}), then runs the action on that
   * thread. Nothing runs if the lease is closed first.
   */
  void acquireLater(String name, Runnable acquired) {
    Thread t =
        Threads.factory("lease", true)
            .newThread(
                () -> {
                  if (waitForLease()) {
                    acquired.run();
                  }
                });
    t.setName(t.getName() + "-" + name);
    t.start();
  }

  private boolean waitForLease() {
    while (!closed) {
      Lease holder = HELD_IN_THIS_JVM.get(path);
      if (holder != null && holder != this) {
        try {
          holder.released.get(200, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException stillHeld) {
          // check whether this lease was closed meanwhile (released never fails)
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
        continue;
      }
      try {
        FileLock l = channel.lock(); // blocks while another process holds it
        synchronized (HELD_IN_THIS_JVM) {
          if (closed || HELD_IN_THIS_JVM.putIfAbsent(path, this) != null) {
            l.release();
            continue;
          }
          lock = l;
        }
        return true;
      } catch (OverlappingFileLockException sameJvm) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // taken in this JVM just now
      } catch (ClosedChannelException closedMeanwhile) {
        return false;
      } catch (IOException e) {
        LOG.warn("Cannot wait for the lease {}: {}", path, e.toString());
        return false;
      }
    }
    return false;
  }

  /** Releases the lease (if held) and stops waiting for it. */
  @Override
  public void close() {
    closed = true;
    synchronized (HELD_IN_THIS_JVM) {
      FileLock l = lock;
      lock = null;
      if (l != null) {
        try {
          l.release();
        } catch (IOException e) {
          LOG.debug("releasing {}: {}", path, e.toString());
        }
        HELD_IN_THIS_JVM.remove(path, this);
      }
    }
    try {
      channel.close();
    } catch (IOException e) {
      LOG.debug("closing {}: {}", path, e.toString());
    }
    released.complete(null);
  }
}
