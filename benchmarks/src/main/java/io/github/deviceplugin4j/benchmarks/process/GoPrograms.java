package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's Go programs ({@code benchmarks/go}), built by {@code benchmarks/go/build.sh} into
 * the run's own directory ({@code <run>/go/bin}; run by hand, the script's default is {@code
 * benchmarks/target/go/bin}): the kubelet-like {@code kubelet-client}, the {@code stub-plugin} peer
 * and the {@code fake-kubelet} that times re-registration. Go is optional: the Maven build never
 * needs it, and {@link #build} answers empty unless the whole toolchain (go, protoc, its two Go
 * generators and Debian's Go gRPC and protobuf packages) is installed.
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

  /** The programs {@code build.sh} runs from the PATH. */
  static final List<String> TOOLS = List.of("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc");

  /**
   * The Go packages the programs import, as directories of the Debian packages' GOPATH, with the
   * package that installs each.
   */
  static final Map<String, String> PACKAGES =
      Map.of(
          "google.golang.org/grpc", "golang-google-grpc-dev",
          "google.golang.org/protobuf", "golang-google-protobuf-dev",
          "github.com/golang/protobuf", "golang-goprotobuf-dev");

  /** Where Debian's Go packages install their sources. */
  static final Path DEBIAN_GOPATH = Path.of("/usr/share/gocode");

  /** The programs built for each run's directory: every Go scenario of a run uses one build. */
  private static final Map<Path, GoPrograms> BUILT = new ConcurrentHashMap<>();

  /**
   * What of the Go toolchain the programs need is missing on this machine.
   *
   * @return the missing programs and packages, empty when the programs can be built
   */
  public static List<String> missing() {
    return missing(System.getenv("PATH"), DEBIAN_GOPATH);
  }

  /**
   * What of the toolchain is missing, for a PATH value and a GOPATH directory.
   *
   * @param path a PATH value, may be null
   * @param gopath where the Go packages' sources are looked for ({@code src/<import path>})
   * @return missing programs ({@code protoc-gen-go-grpc}) and packages ({@code
   *     google.golang.org/grpc (golang-google-grpc-dev)}), in a stable order
   */
  static List<String> missing(String path, Path gopath) {
    List<String> out = new ArrayList<>();
    for (String tool : TOOLS) {
      if (!onPath(path, tool)) {
        out.add(tool);
      }
    }
    new TreeMap<>(PACKAGES)
        .forEach(
            (pkg, debian) -> {
              if (!Files.isDirectory(gopath.resolve("src").resolve(pkg))) {
                out.add(pkg + " (" + debian + ")");
              }
            });
    return out;
  }

  /**
   * Why the Go scenarios skip on this machine: what is missing and the command that installs it.
   *
   * @return the reason a scenario prints
   */
  public static String missingReason() {
    return missingReason(missing());
  }

  static String missingReason(List<String> missing) {
    return "the Go toolchain is incomplete (missing "
        + String.join(", ", missing)
        + "): the Go-client scenarios are skipped. Install it with: "
        + INSTALL;
  }

  /**
   * Whether an executable of this name is in one of the directories of a PATH value.
   *
   * @param path a PATH value, may be null
   * @param name the program
   * @return true when it is
   */
  static boolean onPath(String path, String name) {
    if (path == null) {
      return false;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Builds the programs once per run (generated code and binaries under the run's {@code go}
   * directory: two test JVMs building into one directory removed each other's generated code).
   *
   * @param ctx the run: the repository is the parent of its examples directory
   * @return the programs, or empty when part of the toolchain is {@link #missing()}
   * @throws IllegalStateException when the build script fails, with its output
   */
  public static synchronized Optional<GoPrograms> build(BenchContext ctx) throws Exception {
    if (!missing().isEmpty()) {
      return Optional.empty();
    }
    GoPrograms built = BUILT.get(ctx.root());
    if (built != null && built.all().stream().allMatch(Files::isExecutable)) {
      return Optional.of(built);
    }
    Path repo = ctx.examplesDir().toAbsolutePath().normalize().getParent();
    Path script = repo.resolve("benchmarks").resolve("go").resolve("build.sh");
    if (!Files.isRegularFile(script)) {
      throw new IllegalStateException(
          script
              + " is missing: run the benchmarks from the repository (--examples=<repo>/examples)");
    }
    Path out = ctx.root().resolve("go");
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
    built =
        new GoPrograms(
            bin.resolve("kubelet-client"), bin.resolve("stub-plugin"), bin.resolve("fake-kubelet"));
    BUILT.put(ctx.root(), built);
    return Optional.of(built);
  }

  private List<Path> all() {
    return List.of(kubeletClient, stubPlugin, fakeKubelet);
  }

  private static String read(Path log) throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }
}
