package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.reliability.ExampleNode.Plugin;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The example FPGA plugin as processes against a kubelet that treats endpoints like the real one
 * ({@link EndpointModelKubelet}: a superseded connection is never closed by the kubelet, and any
 * stream's end disconnects the resource by name). Prints the unhealthy windows of a rolling update
 * with surge (two processes of one resource) and of an in-place re-registration.
 */
class HandoverProcessTest {

  private static final Duration START = PluginProcessTest.START;
  private static final Plugin PLUGIN = Plugin.FPGA;

  @TempDir Path tmp;

  /**
   * A rolling update with {@code maxSurge: 1}: the new pod starts while the old one serves, becomes
   * registered (Ready), the old one is stopped. At most one unhealthy window, from the old
   * connection's end to the new instance's registration after it, in milliseconds.
   */
  @ParameterizedTest(name = "old instance stopped by {0}")
  @ValueSource(strings = {"SIGTERM", "SIGKILL"})
  @Timeout(value = 4, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void rollingUpdateWithSurge_atMostOneShortUnhealthyWindow(String signal) throws Exception {
    Path pluginDir = tmp.resolve("dp");
    // Each pod has its own container file system (its ready file); the plugin directory is shared.
    ExampleNode oldPod = new ExampleNode(Files.createDirectories(tmp.resolve("old")));
    ExampleNode newPod = new ExampleNode(Files.createDirectories(tmp.resolve("new")));
    Path oldLog = tmp.resolve("old.log");
    Path newLog = tmp.resolve("new.log");
    Process old = null;
    Process fresh = null;
    try (EndpointModelKubelet kubelet = new EndpointModelKubelet(pluginDir)) {
      old = oldPod.start(PLUGIN, pluginDir, oldLog);
      awaitRegistrations(kubelet, 1, old, oldLog);
      String oldEndpoint = kubelet.registrations().get(0);

      long t0 = System.nanoTime();
      fresh = newPod.start(PLUGIN, pluginDir, newLog);
      awaitRegistrations(kubelet, 2, fresh, newLog);
      double takeOverMs = (System.nanoTime() - t0) / 1e6;
      String newEndpoint = kubelet.registrations().get(1);
      assertThat(newEndpoint).isNotEqualTo(oldEndpoint);
      await().atMost(START).until(() -> PluginProcessTest.read(oldLog).contains("newer instance"));
      assertThat(kubelet.disconnects()).as("disconnects before the old pod stops").isZero();

      long t1 = System.nanoTime();
      if (signal.equals("SIGTERM")) {
        old.destroy();
      } else {
        old.destroyForcibly();
      }
      assertThat(old.waitFor(30, TimeUnit.SECONDS)).as("old instance exits").isTrue();
      double exitMs = (System.nanoTime() - t1) / 1e6;
      awaitRegistrations(kubelet, 3, fresh, newLog);
      await().atMost(START).until(() -> !kubelet.disconnected() && !kubelet.windows().isEmpty());

      List<EndpointModelKubelet.Window> windows = kubelet.windows();
      Figures.print(
          String.format(
              Locale.ROOT,
              "handover %s %s: newInstanceRegistered=%.0fms (JVM start included) oldExit=%s"
                  + " after=%.0fms unhealthyWindows=%d windowMs=%s (Register arrived %.1fms into"
                  + " it) registrations=%s",
              PLUGIN.module,
              signal,
              takeOverMs,
              signal.equals("SIGTERM") ? Integer.toString(old.exitValue()) : "killed",
              exitMs,
              windows.size(),
              windows.stream().map(w -> String.format(Locale.ROOT, "%.1f", w.ms())).toList(),
              windows.isEmpty()
                  ? -1.0
                  : (kubelet.registerCalls().get(2) - windows.get(0).startNanos()) / 1e6,
              kubelet.registrations()));
      if (signal.equals("SIGTERM")) {
        assertThat(old.exitValue()).as(PluginProcessTest.read(oldLog)).isZero();
        assertThat(Files.exists(pluginDir.resolve(oldEndpoint), LinkOption.NOFOLLOW_LINKS))
            .as("the old instance removed its socket")
            .isFalse();
      }
      assertThat(windows).as("unhealthy windows in one rollout").hasSize(1);
      // Without the handover the window lasts until the 5 s safety check registers again.
      assertThat(windows.get(0).ms()).as("window ms").isLessThan(2000.0);
      assertThat(kubelet.registrations().get(2)).isEqualTo(newEndpoint);
      assertThat(fresh.isAlive()).isTrue();
      assertThat(PluginProcessTest.read(newLog))
          .doesNotContain("Exception")
          .doesNotContain("ERROR");

      fresh.destroy();
      assertThat(fresh.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(fresh.exitValue()).isZero();
    } finally {
      for (Process p : new Process[] {old, fresh}) {
        if (p != null) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      }
    }
  }

  /**
   * The plugin's socket is deleted while the kubelet runs: the plugin serves it again and registers
   * again; the superseded connection stays open, so the kubelet never disconnects the resource (it
   * used to, when the old server was closed 10 s later, until the 5 s safety check).
   */
  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void inPlaceReRegistration_noUnhealthyWindow() throws Exception {
    Path pluginDir = tmp.resolve("dp");
    ExampleNode node = new ExampleNode(Files.createDirectories(tmp.resolve("n")));
    Path log = tmp.resolve("plugin.log");
    Process p = null;
    try (EndpointModelKubelet kubelet = new EndpointModelKubelet(pluginDir)) {
      p = node.start(PLUGIN, pluginDir, log);
      awaitRegistrations(kubelet, 1, p, log);
      kubelet.awaitStreaming(1, START);
      await().atMost(START).until(() -> PluginProcessTest.read(log).contains("Registered"));
      Path socket = pluginDir.resolve(kubelet.registrations().get(0));

      long t0 = System.nanoTime();
      Files.delete(socket);
      awaitRegistrations(kubelet, 2, p, log);
      double reRegisteredMs = (System.nanoTime() - t0) / 1e6;
      Duration watched = Duration.ofSeconds(16); // past the old 10 s close and a safety check
      await()
          .during(watched)
          .atMost(watched.plusSeconds(30))
          .until(() -> kubelet.disconnects() == 0 && kubelet.registrations().size() == 2);

      Figures.print(
          String.format(
              Locale.ROOT,
              "in-place re-registration %s: registeredAgain=%.0fms unhealthyWindows=%d"
                  + " disconnects=%d over %ds",
              PLUGIN.module,
              reRegisteredMs,
              kubelet.windows().size(),
              kubelet.disconnects(),
              watched.toSeconds()));
      assertThat(kubelet.windows()).isEmpty();
      p.destroy();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isZero();
    } finally {
      if (p != null) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private static void awaitRegistrations(EndpointModelKubelet kubelet, int n, Process p, Path log)
      throws Exception {
    try {
      kubelet.awaitRegistrations(n, START);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          "registrations "
              + kubelet.registrations()
              + ", wanted "
              + n
              + " (alive="
              + p.isAlive()
              + "); log:\n"
              + PluginProcessTest.read(log),
          e);
    }
  }
}
