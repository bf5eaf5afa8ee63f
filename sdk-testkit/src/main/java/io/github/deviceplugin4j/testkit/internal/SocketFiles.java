package io.github.deviceplugin4j.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Socket file helpers with the plain JDK (no native code). */
public final class SocketFiles {
  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;

  private SocketFiles() {}

  /**
   * Whether the path is a Unix socket (following symbolic links, like Go's {@code os.Stat}).
   *
   * @param p the path
   * @return true for a socket; false for anything else or a missing file
   */
  public static boolean isSocket(Path p) {
    try {
      Object mode = Files.getAttribute(p, "unix:mode");
      return mode instanceof Integer m && (m & S_IFMT) == S_IFSOCK;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * Deletes the socket files directly in a directory, as the kubelet's device manager does on
   * start: directories and other files stay.
   *
   * @param dir the directory
   * @return the deleted paths
   */
  public static List<Path> deleteSocketsIn(Path dir) {
    List<Path> deleted = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        if (isSocket(p)) {
          Files.deleteIfExists(p);
          deleted.add(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot clean up sockets in " + dir, e);
    }
    return deleted;
  }

  /**
   * Deletes every file directly in a directory that is not a directory, except one name, as the
   * v1.26 kubelet's device manager does on start (it keeps its checkpoint file). Symbolic links are
   * deleted themselves, not followed.
   *
   * @param dir the directory
   * @param keep the file name to keep
   * @return the deleted paths
   */
  public static List<Path> deleteNonDirectoriesIn(Path dir, String keep) {
    List<Path> deleted = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        if (!p.getFileName().toString().equals(keep)
            && !Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.deleteIfExists(p);
          deleted.add(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot clean up files in " + dir, e);
    }
    return deleted;
  }

  /**
   * The socket files directly in a directory.
   *
   * @param dir the directory
   * @return the sockets, sorted; empty if the directory is missing
   */
  public static List<Path> socketsIn(Path dir) {
    List<Path> found = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return found;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        if (isSocket(p)) {
          found.add(p);
        }
      }
    } catch (IOException e) {
      return found;
    }
    found.sort(null);
    return found;
  }
}
