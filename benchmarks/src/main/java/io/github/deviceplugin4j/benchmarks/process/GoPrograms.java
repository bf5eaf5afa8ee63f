package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's Go programs ({@code benchmarks/go}), built by {@code benchmarks/go/build.sh} into
 * {@code benchmarks/target/go/bin}: the kubelet-like {@code kubelet-client}, the {@code
 * stub-plugin} peer and the {@code fake-kubelet} that times re-registration. Go is optional: the
 * Maven build never needs it, and {@link #build} answers empty when {@code go} is not on the PATH.
 *
 * @param kubeletClient drives Allocate or the admit path on plugin sockets
 * @param stubPlugin the grpc-go device plugin
 * @param fakeKubelet serves kubelet.sock and times each registration step
 */
public record GoPrograms(Path kubeletClient, Path stubPlugin, Path fakeKubelet) {

  /** The Debian packages the programs build from; no Go module is downloaded. */
  public static final String INSTALL =
      "apt-get install -y golang-go golang-google-grpc-dev golang-google-protobuf-dev"
          + " golang-goprotobuf-dev protoc-gen-go-grpc protobuf-compiler";

  /** What a scenario prints when it skips. */
  public static final String MISSING =
      "Go is not installed (no `go` on PATH): the Go-client scenarios are skipped. Install it with: "
          + INSTALL;

  /**
   * Whether {@code go} is an executable on the PATH.
   *
   * @return true when it is
   */
  public static boolean goOnPath() {
    return goOn(System.getenv("PATH"));
  }

  /**
   * Whether {@code go} is an executable in one of the directories of a PATH value.
   *
   * @param path a PATH value, may be null
   * @return true when it is
   */
  static boolean goOn(String path) {
    if (path == null) {
      return false;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "go"))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Builds the programs (generated code and binaries under {@code benchmarks/target/go}).
   *
   * @param ctx the run: the repository is the parent of its examples directory
   * @return the programs, or empty when Go is not on the PATH
   * @throws IllegalStateException when the build script fails, with its output
   */
  public static Optional<GoPrograms> build(BenchContext ctx) throws Exception {
    if (!goOnPath()) {
      return Optional.empty();
    }
    Path repo = ctx.examplesDir().toAbsolutePath().normalize().getParent();
    Path script = repo.resolve("benchmarks").resolve("go").resolve("build.sh");
    if (!Files.isRegularFile(script)) {
      throw new IllegalStateException(
          script
              + " is missing: run the benchmarks from the repository (--examples=<repo>/examples)");
    }
    Path out = repo.resolve("benchmarks").resolve("target").resolve("go");
    Path log = ctx.root().resolve("go-build.log");
    Process p =
        new ProcessBuilder(List.of("sh", script.toString(), out.toString()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException(script + " did not finish within 5 minutes\n" + read(log));
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          script + " failed with status " + p.exitValue() + ":\n" + read(log));
    }
    Path bin = out.resolve("bin");
    return Optional.of(
        new GoPrograms(
            bin.resolve("kubelet-client"),
            bin.resolve("stub-plugin"),
            bin.resolve("fake-kubelet")));
  }

  private static String read(Path log) throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }
}
