package io.github.deviceplugin4j.reliability;

import io.github.deviceplugin4j.reliability.ExampleNode.Plugin;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Registration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The FPGA example's jar as a process with the images' JVM flags (read from its Dockerfile's {@code
 * JDK_JAVA_OPTIONS}, so the test runs what ships), registered in legacy mode with a fake kubelet in
 * this JVM.
 */
final class PluginUnderAttack implements AutoCloseable {

  private static final Plugin PLUGIN = Plugin.FPGA;

  /** System property: path of the grpc-go stub plugin to attack instead of the FPGA example. */
  static final String GO_STUB_PROPERTY = "reliability.hostile.goStub";

  private static final String GO_RESOURCE = "stub.example.com/go";

  private final FakeKubelet kubelet;
  private final Process process;
  private final Path log;
  private final Path socket;
  private final String resource;

  private PluginUnderAttack(
      FakeKubelet kubelet, Process process, Path log, Path socket, String resource) {
    this.kubelet = kubelet;
    this.process = process;
    this.log = log;
    this.socket = socket;
    this.resource = resource;
  }

  /** The grpc-go stub's path, when the run attacks it instead; empty otherwise. */
  static String goStub() {
    String stub = System.getProperty(GO_STUB_PROPERTY, "");
    return stub.isBlank() ? "" : stub.trim();
  }

  static PluginUnderAttack start(Path tmp) throws IOException {
    ExampleNode node = new ExampleNode(Files.createDirectories(tmp.resolve("n")));
    Path log = tmp.resolve("plugin.log");
    FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
    String resource = goStub().isEmpty() ? PLUGIN.resource : GO_RESOURCE;
    List<String> cmd;
    if (goStub().isEmpty()) {
      cmd = new ArrayList<>(node.command(PLUGIN));
      // The images' JDK and flags instead of the test default's.
      cmd.removeIf(a -> a.startsWith("-XX:"));
      cmd.addAll(1, imageFlags());
      Path java = imageJava();
      cmd.set(0, java.toString());
      if (!isImageJdk(java)) {
        // The flags are the JDK 25 image's; an older JDK skips the ones it does not know.
        cmd.add(1, "-XX:+IgnoreUnrecognizedVMOptions");
      }
    } else {
      cmd =
          List.of(
              goStub(),
              "-dir",
              kubelet.pluginDir().toString(),
              "-socket",
              "go.sock",
              "-resource",
              GO_RESOURCE,
              "-devices",
              "2",
              "-register");
    }
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("DEVICE_PLUGIN_DIR", kubelet.pluginDir().toString());
    pb.environment().put("PLUGINS_REGISTRY_DIR", tmp.resolve("no-registry").toString());
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    Process p = pb.start();
    try {
      Registration r = PluginProcessTest.awaitRegistration(kubelet, resource, p, log);
      kubelet.awaitDevices(resource, l -> l.size() == 2, Duration.ofSeconds(60));
      return new PluginUnderAttack(kubelet, p, log, Path.of(r.endpoint()), resource);
    } catch (RuntimeException | AssertionError e) {
      p.destroyForcibly();
      kubelet.close();
      throw e;
    }
  }

  /** System property: the {@code java} launcher of the images' JDK (25). */
  static final String IMAGE_JAVA_PROPERTY = "reliability.imageJava";

  private static final Path TEMURIN_25 = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");

  /**
   * The launcher of the JDK the images run (JDK 25; {@value #IMAGE_JAVA_PROPERTY} names another),
   * or, where none is installed, this test's own JDK: the images' flags run on it with the ones it
   * does not know skipped, and {@link #name()} says so.
   */
  static Path imageJava() {
    String named = System.getProperty(IMAGE_JAVA_PROPERTY, "");
    Path java = named.isBlank() ? TEMURIN_25 : Path.of(named.trim());
    return Files.isExecutable(java)
        ? java
        : Path.of(System.getProperty("java.home"), "bin", "java");
  }

  private static boolean isImageJdk(Path java) {
    return !java.startsWith(Path.of(System.getProperty("java.home")))
        || Runtime.version().feature() >= 25;
  }

  /** The JVM flags of examples/fpga/Dockerfile's {@code JDK_JAVA_OPTIONS}. */
  static List<String> imageFlags() throws IOException {
    Path dockerfile = PLUGIN.jar().getParent().getParent().resolve("Dockerfile");
    String text = Files.readString(dockerfile, StandardCharsets.UTF_8).replace("\\\n", " ");
    Matcher m = Pattern.compile("ENV JDK_JAVA_OPTIONS=\"([^\"]*)\"").matcher(text);
    if (!m.find()) {
      throw new IllegalStateException("no JDK_JAVA_OPTIONS in " + dockerfile);
    }
    List<String> flags = new ArrayList<>(Arrays.asList(m.group(1).trim().split("\\s+")));
    // The image's archive is not built here.
    flags.remove("-Xshare:auto");
    return flags;
  }

  FakeKubelet kubelet() {
    return kubelet;
  }

  String resource() {
    return resource;
  }

  /** Which plugin this is, for the table. */
  String name() {
    if (!goStub().isEmpty()) {
      return "grpc-go stub";
    }
    Path java = imageJava();
    return isImageJdk(java)
        ? "deviceplugin4j (FPGA example)"
        : "deviceplugin4j (FPGA example, JDK " + Runtime.version().feature() + ": no JDK 25)";
  }

  /** Whether the SDK's bounds are asserted: for the SDK's plugin, not for the peer row. */
  boolean isTheSdk() {
    return goStub().isEmpty();
  }

  Path socket() {
    return socket;
  }

  boolean alive() {
    return process.isAlive();
  }

  /** Lines the plugin wrote so far (newlines in its log). */
  long logLines() {
    try {
      long n = 0;
      for (byte b : Files.readAllBytes(log)) {
        if (b == '\n') {
          n++;
        }
      }
      return n;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The log's lines after the first {@code skip}. */
  List<String> logLinesAfter(long skip) throws IOException {
    try (var lines = Files.lines(log, StandardCharsets.UTF_8)) {
      return lines.skip(skip).toList();
    }
  }

  String log() throws IOException {
    return PluginProcessTest.read(log);
  }

  /** The process's resident set (VmRSS), in MiB. */
  long rssMiB() throws IOException {
    for (String line :
        Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
      }
    }
    throw new IllegalStateException("no VmRSS for process " + process.pid());
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    kubelet.close();
  }
}
