package io.github.deviceplugin4j.dra;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A second process for {@link DraLockTest}: takes the exclusive lock on the file given as argument,
 * says "locked", and holds it until its standard input ends.
 */
public final class LockHolder {
  private LockHolder() {}

  /**
   * Holds the lock.
   *
   * @param args the lock file
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    try (FileChannel ch =
            FileChannel.open(
                Path.of(args[0]),
                StandardOpenOption.CREATE,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        FileLock lock = ch.lock()) {
      System.out.println("locked");
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold until the parent closes our input
      }
    }
  }
}
