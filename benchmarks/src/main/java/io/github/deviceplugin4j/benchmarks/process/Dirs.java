package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Short directories under the run's work directory ({@code <root>/c1}, {@code <root>/c2}, ...). The
 * FPGA plugin's socket name alone is 57 bytes and a Unix socket path may have 107, so the plugin
 * directory must stay under 50 bytes: {@link BenchContext#newDir} adds 19 random digits per level,
 * too many for two levels.
 */
final class Dirs {

  private Dirs() {}

  /**
   * A new empty directory {@code <root>/<prefix><n>} with the smallest free {@code n}.
   *
   * @param ctx the run
   * @param prefix a letter or two
   * @return the directory
   */
  static synchronized Path create(BenchContext ctx, String prefix) {
    for (int n = 1; ; n++) {
      Path dir = ctx.root().resolve(prefix + n);
      try {
        return Files.createDirectory(dir);
      } catch (FileAlreadyExistsException taken) {
        // next number
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create " + dir, e);
      }
    }
  }
}
