package io.github.deviceplugin4j.core.internal.transport;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.Objects;

/** Facts about socket files: identity, type, liveness. */
public final class SocketFiles {

  /** The longest Unix socket path: 108 bytes including the terminating NUL. */
  public static final int MAX_PATH_BYTES = 107;

  /** The file-system identity of a socket file: file key (device and inode) and change time. */
  public record Identity(Object fileKey, FileTime changed) {
    // Written out: a record's own equals and hashCode build method handles on their first call
    // (about 15 lambda forms, 10-15 ms of CPU with the image's flags), and the first call comes
    // right after the first registration, while the kubelet makes its first Allocate.
    @Override
    public boolean equals(Object o) {
      return o instanceof Identity other
          && Objects.equals(fileKey, other.fileKey)
          && Objects.equals(changed, other.changed);
    }

    @Override
    public int hashCode() {
      return 31 * Objects.hashCode(fileKey) + Objects.hashCode(changed);
    }
  }

  private SocketFiles() {}

  /** The identity of a file, or null when it does not exist. */
  public static Identity identity(Path path) {
    try {
      Map<String, Object> attrs =
          Files.readAttributes(path, "unix:ino,dev,ctime", LinkOption.NOFOLLOW_LINKS);
      return new Identity(attrs.get("dev") + ":" + attrs.get("ino"), (FileTime) attrs.get("ctime"));
    } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
      try {
        BasicFileAttributes a =
            Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        return new Identity(a.fileKey(), a.lastModifiedTime());
      } catch (IOException e) {
        return null;
      }
    } catch (IOException e) {
      return null;
    }
  }

  /** Whether a file is a socket. */
  public static boolean isSocket(Path path) {
    try {
      int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
      return (mode & 0170000) == 0140000;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * Whether a process accepts connections on a socket file. A stale file (its server died) refuses
   * at once; a full backlog counts as live.
   */
  public static boolean isLive(Path path) {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.configureBlocking(false);
      ch.connect(UnixDomainSocketAddress.of(path));
      return true;
    } catch (IOException e) {
      String msg = String.valueOf(e.getMessage());
      // EAGAIN: the listener exists but its backlog is full.
      return msg.contains("Resource temporarily unavailable");
    }
  }

  /** Length of a path as the kernel counts it, in bytes without the terminating NUL. */
  public static int pathBytes(Path path) {
    return path.toString().getBytes(StandardCharsets.UTF_8).length;
  }

  /** Whether two identities are the same file (inode); null-safe. */
  public static boolean sameFile(Identity a, Identity b) {
    return a != null && b != null && Objects.equals(a.fileKey(), b.fileKey());
  }
}
