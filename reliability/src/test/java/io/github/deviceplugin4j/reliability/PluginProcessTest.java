package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.reliability.ExampleNode.Plugin;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The example plugins as processes (their runnable jars): SIGTERM ends them cleanly, and a second
 * instance on the same directory (a rolling update) does not break the first.
 */
class PluginProcessTest {

  static final Duration START = Duration.ofSeconds(60);

  @TempDir Path tmp;

  /**
   * SIGTERM to a registered plugin: its socket is removed, it exits with status 0, within 2 s; it
   * never listened on TCP.
   */
  @ParameterizedTest
  @EnumSource(Plugin.class)
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void sigterm_removesSocket_exitsZero_withinTwoSeconds(Plugin plugin) throws Exception {
    ExampleNode node = new ExampleNode(Files.createDirectories(tmp.resolve("n")));
    Path log = tmp.resolve("plugin.log");
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"))) {
      Process p = node.start(plugin, kubelet.pluginDir(), log);
      try {
        Registration r = awaitRegistration(kubelet, plugin.resource, p, log);
        Path socket = Path.of(r.endpoint());
        kubelet.awaitDevices(plugin.resource, l -> !l.isEmpty(), START);
        List<String> tcp = ProcessProbe.tcpListeners(p.pid());
        long t0 = System.nanoTime();
        p.destroy(); // SIGTERM
        await()
            .atMost(Duration.ofSeconds(10))
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(1))
            .until(() -> !Files.exists(socket, LinkOption.NOFOLLOW_LINKS) || !p.isAlive());
        double removedMs = (System.nanoTime() - t0) / 1e6;
        boolean exited = p.waitFor(10, TimeUnit.SECONDS);
        double ms = (System.nanoTime() - t0) / 1e6;
        boolean socketGone = !Files.exists(socket, LinkOption.NOFOLLOW_LINKS);
        Figures.print(
            String.format(
                "sigterm %s exit=%s after=%.0fms socketRemovedAfter=%.0fms socketRemoved=%s"
                    + " tcpListeners=%d",
                plugin.module,
                exited ? Integer.toString(p.exitValue()) : "still running",
                ms,
                removedMs,
                socketGone,
                tcp.size()));
        assertThat(exited).as("exited within 10 s").isTrue();
        assertThat(p.exitValue()).as("exit status; log:\n%s", read(log)).isZero();
        assertThat(socketGone).as("socket %s removed", socket).isTrue();
        assertThat(ms).as("ms from SIGTERM to exit").isLessThan(2000.0);
        assertThat(tcp).as("TCP listeners of the plugin process").isEmpty();
        assertThat(read(log)).doesNotContain("Exception").doesNotContain("ERROR");
      } finally {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * A rolling update with surge: a second instance starts while the first still serves. The second
   * must not break the first's socket: it refuses to start (exit 1, naming the live instance), the
   * first keeps its socket file (same inode), keeps serving and stays registered; no temporary file
   * is left behind. When the first dies without cleaning up (SIGKILL: a stale socket stays), the
   * next instance replaces the stale socket and registers.
   */
  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void secondInstanceOnSameDirectory_doesNotBreakTheFirst() throws Exception {
    ExampleNode node = new ExampleNode(Files.createDirectories(tmp.resolve("n")));
    Plugin plugin = Plugin.FPGA;
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"))) {
      Process first = node.start(plugin, kubelet.pluginDir(), tmp.resolve("first.log"));
      Process second = null;
      Process third = null;
      try {
        Registration r =
            awaitRegistration(kubelet, plugin.resource, first, tmp.resolve("first.log"));
        Path socket = Path.of(r.endpoint());
        Object inode = Files.getAttribute(socket, "unix:ino", LinkOption.NOFOLLOW_LINKS);
        int registrations = kubelet.registrations().size();

        long t0 = System.nanoTime();
        second = node.start(plugin, kubelet.pluginDir(), tmp.resolve("second.log"));
        assertThat(second.waitFor(60, TimeUnit.SECONDS)).as("second instance exits").isTrue();
        double refusedMs = (System.nanoTime() - t0) / 1e6;
        String secondLog = read(tmp.resolve("second.log"));
        assertThat(second.exitValue()).as(secondLog).isEqualTo(1);
        assertThat(secondLog).contains("another live process is serving " + socket);
        assertThat(Files.getAttribute(socket, "unix:ino", LinkOption.NOFOLLOW_LINKS))
            .as("the first instance's socket file is untouched")
            .isEqualTo(inode);
        try (RawClient client = RawClient.connect(socket)) {
          assertThat(
                  client
                      .blocking()
                      .getDevicePluginOptions(Empty.getDefaultInstance())
                      .getPreStartRequired())
              .isTrue();
        }
        assertThat(kubelet.registrations()).hasSize(registrations);
        assertThat(kubelet.registration(plugin.resource)).isPresent();
        assertThat(privateLeftovers(kubelet.pluginDir())).isEmpty();

        first.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL: the socket stays
        assertThat(Files.exists(socket, LinkOption.NOFOLLOW_LINKS)).as("stale socket").isTrue();
        Mark t1 = kubelet.mark();
        third = node.start(plugin, kubelet.pluginDir(), tmp.resolve("third.log"));
        Registration taken =
            awaitRegistrationSince(kubelet, plugin.resource, t1, third, tmp.resolve("third.log"));
        double takeOverMs = (taken.nanos() - t1.nanos()) / 1e6;
        third.destroy();
        assertThat(third.waitFor(10, TimeUnit.SECONDS)).isTrue();
        Figures.print(
            String.format(
                "rolling-update secondInstance exit=%d after=%.0fms firstSocketSameInode=true"
                    + " firstStillRegistered=true registrationsUnchanged=true; after SIGKILL of the"
                    + " first: next instance replaced the stale socket and registered %.0fms after"
                    + " exec (JVM start included), exit on SIGTERM=%d",
                second.exitValue(), refusedMs, takeOverMs, third.exitValue()));
        assertThat(third.exitValue()).isZero();
      } finally {
        for (Process p : new Process[] {first, second, third}) {
          if (p != null) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
          }
        }
      }
    }
  }

  static Registration awaitRegistration(FakeKubelet kubelet, String resource, Process p, Path log)
      throws IOException {
    return awaitRegistrationSince(kubelet, resource, new Mark(0, 0, Instant.EPOCH), p, log);
  }

  static Registration awaitRegistrationSince(
      FakeKubelet kubelet, String resource, Mark after, Process p, Path log) throws IOException {
    try {
      return kubelet.awaitRegistration(resource, after, START);
    } catch (AssertionError e) {
      throw new AssertionError(
          "no registration of "
              + resource
              + " (alive="
              + p.isAlive()
              + "); plugin log:\n"
              + read(log),
          e);
    }
  }

  static List<Path> privateLeftovers(Path dir) throws IOException {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, ".dp4j*")) {
      s.forEach(out::add);
    }
    return out;
  }

  static String read(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
  }
}
