package io.github.deviceplugin4j.dra.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock that serializes a driver's prepare and unprepare calls: across the threads of this JVM
 * (every host of the same plugin directory in this process shares one lock) and across processes
 * (an exclusive lock on a file in the plugin directory, as two instances of a driver hold during a
 * rolling update). Held for one call at a time.
 *
 * <p>The JVM-wide lock comes first because the JDK's file locks belong to the whole process: a
 * second lock on the same file from this JVM would fail instead of waiting.
 */
public final class ClaimLock {

  /** The lock file's name in the plugin directory. */
  public static final String FILE_NAME = "deviceplugin4j.lock";

  private static final ConcurrentMap<Path, ReentrantLock> IN_PROCESS = new ConcurrentHashMap<>();

  private final Path file;
  private final ReentrantLock local;

  /**
   * The lock of a plugin directory.
   *
   * @param dir the plugin directory
   */
  public ClaimLock(Path dir) {
    this.file = dir.toAbsolutePath().normalize().resolve(FILE_NAME);
    this.local = IN_PROCESS.computeIfAbsent(file, f -> new ReentrantLock(true));
  }

  /** A held lock; closing releases it. */
  public interface Held extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Waits for the lock.
   *
   * @return the held lock
   * @throws IOException when the lock file cannot be opened or locked
   * @throws InterruptedException when interrupted while waiting
   */
  public Held acquire() throws IOException, InterruptedException {
    local.lockInterruptibly();
    FileChannel channel = null;
    try {
      channel =
          FileChannel.open(
              file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      FileLock lock = channel.lock();
      FileChannel ch = channel;
      return () -> {
        try {
          lock.release();
          ch.close();
        } catch (IOException e) {
          // closing the channel releases the lock in any case
        } finally {
          local.unlock();
        }
      };
    } catch (IOException | RuntimeException e) {
      if (channel != null) {
        channel.close();
      }
      local.unlock();
      throw new IOException("cannot lock " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * The lock file.
   *
   * @return its path
   */
  public Path file() {
    return file;
  }
}
