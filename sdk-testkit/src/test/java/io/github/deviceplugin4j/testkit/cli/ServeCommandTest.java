package io.github.deviceplugin4j.testkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServeCommandTest {
  @TempDir Path dir;

  @Test
  void drivesTheFakeKubeletFromStdin() throws Exception {
    PipedOutputStream feed = new PipedOutputStream();
    PipedInputStream stdin = new PipedInputStream(feed, 1 << 16);
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(stdout, true, StandardCharsets.UTF_8);
    Path pr = dir.resolve("pr.sock");
    CompletableFuture<Integer> exit =
        CompletableFuture.supplyAsync(
            () ->
                Main.run(
                    new String[] {
                      "serve",
                      "--dir",
                      dir.resolve("dp").toString(),
                      "--pod-resources",
                      pr.toString(),
                      "--grace-period-seconds",
                      "1"
                    },
                    stdin,
                    out,
                    out));
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> stdout.toString(StandardCharsets.UTF_8).contains("\"type\":\"ready\""));
    try (TestPlugin plugin =
            new TestPlugin("example.com/s", dir.resolve("dp/s.sock"))
                .devices(TestPlugin.healthyDevices(3))
                .start();
        Writer w = new java.io.OutputStreamWriter(feed, StandardCharsets.UTF_8)) {
      plugin.register(dir.resolve("dp/kubelet.sock"));
      send(w, "await-registration example.com/s 5");
      send(w, "allocate example.com/s --ids 1");
      send(w, "allocate example.com/s dev-2");
      send(w, "cancel example.com/s");
      send(w, "restart");
      send(w, "devices example.com/s");
      send(w, "release nope");
      send(w, "quit");
      assertThat(exit.get(20, TimeUnit.SECONDS)).isZero();
    }
    String text = stdout.toString(StandardCharsets.UTF_8);
    assertThat(text.lines())
        .anyMatch(l -> l.startsWith("{\"type\":\"registered\",\"resource\":\"example.com/s\""))
        // "--ids 1" sends the ID "1" (unknown to this plugin), so the plugin refuses it.
        .anyMatch(
            l ->
                l.startsWith("{\"type\":\"error\",\"command\":\"allocate example.com/s --ids 1\"")
                    && l.contains("\"code\":\"INVALID_ARGUMENT\""))
        .anyMatch(
            l ->
                l.startsWith("{\"type\":\"allocation\"")
                    && l.contains("\"deviceIds\":[\"dev-2\"]")
                    && l.contains("\"cdiDevices\":[\"example.com/test=dev-2\"]")
                    && l.contains("\"problems\":[]"))
        .anyMatch(l -> l.contains("\"kind\":\"LIST_AND_WATCH_CANCELLED\""))
        .anyMatch(
            l -> l.startsWith("{\"type\":\"restarted\",\"time\":\"") && l.contains("\"seq\":"))
        .anyMatch(l -> l.startsWith("{\"type\":\"event\",\"seq\":"))
        .anyMatch(
            l ->
                l.startsWith(
                    "{\"type\":\"devices\",\"resource\":\"example.com/s\",\"capacity\":0,"
                        + "\"allocatable\":0,\"registered\":false"))
        .anyMatch(l -> l.startsWith("{\"type\":\"error\",\"command\":\"release nope\""))
        .last()
        .isEqualTo("{\"type\":\"bye\"}");
  }

  /** Serves with the given extra options, writes a regular file, restarts, quits. */
  private boolean regularFileSurvivesARestart(String... options) throws Exception {
    PipedOutputStream feed = new PipedOutputStream();
    PipedInputStream stdin = new PipedInputStream(feed, 1 << 16);
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(stdout, true, StandardCharsets.UTF_8);
    Path pluginDir = Files.createDirectories(dir.resolve("dp" + options.length));
    Path regular = Files.writeString(pluginDir.resolve("vendor.conf"), "x");
    List<String> argv = new ArrayList<>(List.of("serve", "--dir", pluginDir.toString()));
    argv.addAll(List.of(options));
    CompletableFuture<Integer> exit =
        CompletableFuture.supplyAsync(() -> Main.run(argv.toArray(String[]::new), stdin, out, out));
    try (Writer w = new java.io.OutputStreamWriter(feed, StandardCharsets.UTF_8)) {
      send(w, "restart");
      send(w, "quit");
      assertThat(exit.get(20, TimeUnit.SECONDS)).as(stdout.toString()).isZero();
    }
    return Files.exists(regular);
  }

  @Test
  void kubeletVersionSelectsTheProfileOfTheStartUpCleanup() throws Exception {
    // devicemanager/manager.go removeContents in v1.26: every non-directory entry but the
    // checkpoint; the default (latest) profile deletes only sockets.
    assertThat(regularFileSurvivesARestart()).isTrue();
    assertThat(regularFileSurvivesARestart("--kubelet-version", "1.26")).isFalse();
  }

  @Test
  void anUnknownKubeletVersionIsAUsageErrorNamingTheProfiles() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(err, true, StandardCharsets.UTF_8);
    String[] argv = {"serve", "--dir", dir.toString(), "--kubelet-version", "1.20"};
    assertThat(Main.run(argv, System.in, ps, ps)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("unknown kubelet version '1.20'")
        .contains("V1_26 from 1.26");
  }

  private static void send(Writer w, String line) throws IOException {
    w.write(line + "\n");
    w.flush();
  }

  @Test
  void usageErrorsExitWithTwo() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(err, true, StandardCharsets.UTF_8);
    assertThat(Main.run(new String[] {"serve"}, System.in, ps, ps)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("Missing required option: '--dir=DIR'");
    err.reset();
    assertThat(Main.run(new String[] {"conform", "--checks", "nope", "--", "x"}, System.in, ps, ps))
        .isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("--checks: unknown check 'nope'");
    err.reset();
    assertThat(Main.run(new String[] {"conform", "--help"}, System.in, ps, ps)).isZero();
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("fake-kubelet conform")
        .contains("re-registers-after-restart");
  }

  @Test
  void jsonIsEscaped() {
    assertThat(
            Json.object("t")
                .put("s", "a\"b\\c\nd\u0001")
                .put("n", 3)
                .put("l", java.util.List.of("x", "y\""))
                .toString())
        .isEqualTo(
            "{\"type\":\"t\",\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"n\":3,\"l\":[\"x\",\"y\\\"\"]}");
  }
}
