package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Socket names of the instances of one resource in the plugin directory: the resource's own name
 * ({@code vendor.example.com_fpga.sock}, served by the lease holder) and the names a newer instance
 * serves during a handover ({@code vendor.example.com_fpga-1a2b3c4d.sock}).
 */
final class InstanceSockets {

  private static final String SUFFIX = ".sock";
  private static final Pattern INSTANCE = Pattern.compile("-[0-9a-f]{8}\\.sock");

  private final Path dir;
  private final String base;

  /** The sockets of a resource in a directory, {@code canonical} its own socket name. */
  InstanceSockets(Path dir, String canonical) {
    this.dir = dir;
    this.base = canonical.substring(0, canonical.length() - SUFFIX.length());
  }

  /** A fresh name for a newer instance's socket. */
  String newInstanceName() {
    return base + "-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + SUFFIX;
  }

  /** Whether a file name is the socket of an instance of this resource other than {@code own}. */
  boolean isOtherInstance(String fileName, String own) {
    return !fileName.equals(own)
        && fileName.startsWith(base)
        && INSTANCE.matcher(fileName.substring(base.length())).matches();
  }

  /**
   * The sockets of this resource other than {@code own}: the resource's own name and other
   * instances' names, live or not.
   */
  List<Path> others(String own) {
    String canonical = base + SUFFIX;
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(
              p -> {
                String f = p.getFileName().toString();
                return f.equals(canonical) ? !f.equals(own) : isOtherInstance(f, own);
              })
          .filter(SocketFiles::isSocket)
          .toList();
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }

  /**
   * The file name of a live socket of another instance (its server accepts connections), or null.
   */
  String liveOther(String own) {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(f -> isOtherInstance(f, own))
          .filter(f -> SocketFiles.isLive(dir.resolve(f)))
          .findFirst()
          .orElse(null);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
