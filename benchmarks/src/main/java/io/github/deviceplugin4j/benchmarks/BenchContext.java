package io.github.deviceplugin4j.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a scenario needs: the sizes, a short work directory (Unix socket paths are limited to 107
 * bytes), and where the example plugins' runnable jars are.
 *
 * @param sizes how much to measure
 * @param root the run's work directory
 * @param examplesDir the repository's {@code examples} directory
 * @param client which kubelet client drives the plugins in the scenarios that offer a choice
 *     ({@code allocate}, {@code restart})
 */
public record BenchContext(Sizes sizes, Path root, Path examplesDir, Client client) {

  /** The kubelet side of the scenarios that offer a choice. */
  public enum Client {
    /** grpc-java in the harness's JVM, plugins in the same JVM (the default). */
    JVM,
    /**
     * The benchmark's Go programs (benchmarks/go, grpc-go like the kubelet), every plugin a
     * separate process.
     */
    GO
  }

  /**
   * A context with the in-JVM client.
   *
   * @param sizes how much to measure
   * @param root the run's work directory
   * @param examplesDir the repository's {@code examples} directory
   */
  public BenchContext(Sizes sizes, Path root, Path examplesDir) {
    this(sizes, root, examplesDir, Client.JVM);
  }

  /**
   * A new empty directory {@code <root>/<prefix><n>}, with the smallest free {@code n}. Names stay
   * short on purpose: a Unix socket path may have 107 bytes, and the FPGA example's socket name
   * alone has 57, so plugin directories must stay under 50.
   *
   * @param prefix a short prefix, e.g. {@code alloc}
   * @return the directory
   */
  public synchronized Path newDir(String prefix) {
    for (int n = 1; ; n++) {
      Path dir = root.resolve(prefix + n);
      try {
        return Files.createDirectory(dir);
      } catch (FileAlreadyExistsException taken) {
        // next number
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create " + dir, e);
      }
    }
  }

  /**
   * An example plugin's runnable jar, {@code examples/<module>/target/<artifactId>.jar}.
   *
   * @param module the example's directory name, e.g. {@code fpga}
   * @return the jar
   * @throws IllegalStateException when it was not built
   */
  public Path exampleJar(String module) {
    Path jar =
        examplesDir
            .resolve(module)
            .resolve("target")
            .resolve("deviceplugin4j-example-" + module + ".jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          jar.toAbsolutePath().normalize()
              + " is missing: build everything first (./mvnw -B -q install -DskipTests)");
    }
    return jar.toAbsolutePath().normalize();
  }
}
