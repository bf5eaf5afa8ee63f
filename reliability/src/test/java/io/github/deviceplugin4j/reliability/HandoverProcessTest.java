package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.reliability.ExampleNode.Plugin;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletProfile;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import io.github.deviceplugin4j.testkit.UnhealthyWindow;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The example FPGA plugin as processes against the fake kubelet, which treats endpoints like the
 * real one: a superseded connection is never closed by the kubelet, and the end of any stream of a
 * resource disconnects the resource by name (every device unhealthy, the current endpoint stopped
 * until the next registration). Prints the unhealthy windows of a rolling update with surge (two
 * processes of one resource) and of an in-place re-registration, for the kubelet behaviours of
 * v1.27-v1.36 (the newest connection is the one closed) and of the newest kubelets.
 */
// Each test has its own directories, fake kubelet and plugin processes; most of their time is
// spent watching for unhealthy windows, so two run at a time.
@Execution(ExecutionMode.CONCURRENT)
class HandoverProcessTest {

  private static final Duration START = PluginProcessTest.START;
  private static final Plugin PLUGIN = Plugin.FPGA;

  @TempDir Path tmp;

  /**
   * A rolling update with {@code maxSurge: 1}: the new pod starts while the old one serves, becomes
   * registered (Ready), the old one is stopped. At most one unhealthy window, from the old
   * connection's end to the new instance's registration after it.
   */
  @ParameterizedTest(name = "old instance stopped by {0}, kubelet {1}")
  @CsvSource({"SIGTERM, V1_27", "SIGKILL, V1_27", "SIGTERM, LATEST", "SIGKILL, LATEST"})
  @Timeout(value = 4, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void rollingUpdateWithSurge_atMostOneShortUnhealthyWindow(String signal, KubeletProfile profile)
      throws Exception {
    rollingUpdate(signal, profile, false);
  }

  /**
   * The same rolling update in plugin watcher mode: each instance serves its own socket in the
   * registry directory; when the old one stops, the new one moves to a fresh socket name at once
   * (the real kubelet's plugin watcher registers it at its next reconcile pass, within a second;
   * the fake registers it when it sees it).
   */
  @ParameterizedTest(name = "plugin watcher mode, old instance stopped by {0}, kubelet {1}")
  @CsvSource({"SIGTERM, V1_27", "SIGKILL, V1_27", "SIGTERM, LATEST", "SIGKILL, LATEST"})
  @Timeout(value = 4, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void rollingUpdateWithSurge_pluginWatcherMode_atMostOneShortUnhealthyWindow(
      String signal, KubeletProfile profile) throws Exception {
    rollingUpdate(signal, profile, true);
  }

  private void rollingUpdate(String signal, KubeletProfile profile, boolean watcher)
      throws Exception {
    Path pluginDir = tmp.resolve("dp");
    Path registryDir = Files.createDirectories(tmp.resolve("reg"));
    // Each pod has its own container file system (its ready file); the plugin directory is shared.
    ExampleNode oldPod = new ExampleNode(Files.createDirectories(tmp.resolve("old")));
    ExampleNode newPod = new ExampleNode(Files.createDirectories(tmp.resolve("new")));
    Path oldLog = tmp.resolve("old.log");
    Path newLog = tmp.resolve("new.log");
    Process old = null;
    Process fresh = null;
    FakeKubelet.Builder builder = FakeKubelet.builder().pluginDir(pluginDir).profile(profile);
    if (watcher) {
      builder.registryDir(registryDir);
    }
    try (FakeKubelet kubelet = builder.start()) {
      Mark begin = kubelet.mark();
      old =
          watcher
              ? oldPod.start(PLUGIN, pluginDir, registryDir, oldLog)
              : oldPod.start(PLUGIN, pluginDir, oldLog);
      Registration first = awaitRegistration(kubelet, begin, old, oldLog);
      kubelet.awaitDevices(PLUGIN.resource, HandoverProcessTest::allHealthy, START);

      Mark surge = kubelet.mark();
      fresh =
          watcher
              ? newPod.start(PLUGIN, pluginDir, registryDir, newLog)
              : newPod.start(PLUGIN, pluginDir, newLog);
      Registration second = awaitRegistration(kubelet, surge, fresh, newLog);
      double takeOverMs = (second.nanos() - surge.nanos()) / 1e6;
      assertThat(second.endpoint()).isNotEqualTo(first.endpoint());
      await().atMost(START).until(() -> PluginProcessTest.read(oldLog).contains("newer instance"));
      assertThat(kubelet.unhealthyWindows(PLUGIN.resource, begin))
          .as("unhealthy windows before the old pod stops")
          .isEmpty();

      Mark stop = kubelet.mark();
      if (signal.equals("SIGTERM")) {
        old.destroy();
      } else {
        old.destroyForcibly();
      }
      assertThat(old.waitFor(30, TimeUnit.SECONDS)).as("old instance exits").isTrue();
      double exitMs = (System.nanoTime() - stop.nanos()) / 1e6;
      Registration third = awaitRegistration(kubelet, stop, fresh, newLog);
      await()
          .atMost(START)
          .until(
              () -> {
                List<UnhealthyWindow> w = kubelet.unhealthyWindows(PLUGIN.resource, stop);
                return !w.isEmpty() && w.stream().noneMatch(UnhealthyWindow::open);
              });
      // Long enough for a second disconnect to follow the first, had the handover caused one.
      Duration settle = Duration.ofSeconds(2);
      await()
          .during(settle)
          .atMost(settle.plus(START))
          .until(
              () ->
                  kubelet.unhealthyWindows(PLUGIN.resource, stop).stream()
                      .noneMatch(UnhealthyWindow::open));

      List<UnhealthyWindow> windows = kubelet.unhealthyWindows(PLUGIN.resource, stop);
      Figures.print(
          String.format(
              Locale.ROOT,
              "handover %s%s %s kubelet=%s: newInstanceRegistered=%.0fms (JVM start included)"
                  + " oldExit=%s after=%.0fms unhealthyWindows=%d windowMs=%s causes=%s endpoints: old=%s"
                  + " new=%s",
              PLUGIN.module,
              watcher ? " plugin-watcher" : "",
              signal,
              profile,
              takeOverMs,
              signal.equals("SIGTERM") ? Integer.toString(old.exitValue()) : "killed",
              exitMs,
              windows.size(),
              windows.stream()
                  .map(w -> String.format(Locale.ROOT, "%.1f", w.duration().toNanos() / 1e6))
                  .toList(),
              windows.stream().map(UnhealthyWindow::cause).toList(),
              Path.of(first.endpoint()).getFileName(),
              Path.of(second.endpoint()).getFileName()));
      if (signal.equals("SIGTERM")) {
        assertThat(old.exitValue()).as(PluginProcessTest.read(oldLog)).isZero();
        assertThat(Files.exists(pluginDir.resolve(first.endpoint()), LinkOption.NOFOLLOW_LINKS))
            .as("the old instance removed its socket")
            .isFalse();
      }
      assertThat(windows).as("unhealthy windows in one rollout").hasSize(1);
      // Without the handover the window lasts until the 5 s safety check registers again.
      assertThat(windows.get(0).duration()).as("window").isLessThan(Duration.ofSeconds(2));
      if (watcher) {
        // The new instance moved to a fresh socket name so the plugin watcher registers it again.
        assertThat(third.endpoint()).isNotEqualTo(second.endpoint());
        assertThat(third.mode()).isEqualTo(Registration.Mode.PLUGIN_WATCHER);
        try (var files = Files.list(registryDir)) {
          assertThat(files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".sock")))
              .as(
                  "sockets left in the registry directory; log:\n%s",
                  PluginProcessTest.read(newLog))
              .containsExactly(Path.of(third.endpoint()).getFileName().toString());
        }
      } else {
        assertThat(third.endpoint()).isEqualTo(second.endpoint());
      }
      kubelet.awaitDevices(PLUGIN.resource, HandoverProcessTest::allHealthy, START);
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
  @ParameterizedTest(name = "kubelet {0}")
  @EnumSource(
      value = KubeletProfile.class,
      names = {"V1_27", "LATEST"})
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void inPlaceReRegistration_noUnhealthyWindow(KubeletProfile profile) throws Exception {
    Path pluginDir = tmp.resolve("dp");
    ExampleNode node = new ExampleNode(Files.createDirectories(tmp.resolve("n")));
    Path log = tmp.resolve("plugin.log");
    Process p = null;
    try (FakeKubelet kubelet =
        FakeKubelet.builder().pluginDir(pluginDir).profile(profile).start()) {
      Mark begin = kubelet.mark();
      p = node.start(PLUGIN, pluginDir, log);
      Registration first = awaitRegistration(kubelet, begin, p, log);
      kubelet.awaitDevices(PLUGIN.resource, HandoverProcessTest::allHealthy, START);
      await().atMost(START).until(() -> PluginProcessTest.read(log).contains("Registered"));

      Mark deleted = kubelet.mark();
      Files.delete(pluginDir.resolve(first.endpoint()));
      Registration again = awaitRegistration(kubelet, deleted, p, log);
      double reRegisteredMs = (again.nanos() - deleted.nanos()) / 1e6;
      Duration watched = Duration.ofSeconds(16); // past the old 10 s close and a safety check
      await()
          .during(watched)
          .atMost(watched.plusSeconds(30))
          .until(() -> kubelet.unhealthyWindows(PLUGIN.resource, deleted).isEmpty());

      long registrations = kubelet.registrations().stream().filter(r -> r.isAfter(deleted)).count();
      Figures.print(
          String.format(
              Locale.ROOT,
              "in-place re-registration %s kubelet=%s: registeredAgain=%.0fms unhealthyWindows=%d"
                  + " registrations=%d over %ds",
              PLUGIN.module,
              profile,
              reRegisteredMs,
              kubelet.unhealthyWindows(PLUGIN.resource, deleted).size(),
              registrations,
              watched.toSeconds()));
      assertThat(registrations).as("registrations after the delete").isEqualTo(1);
      p.destroy();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isZero();
    } finally {
      if (p != null) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private static boolean allHealthy(List<DeviceState> devices) {
    return !devices.isEmpty() && devices.stream().allMatch(DeviceState::healthy);
  }

  private static Registration awaitRegistration(
      FakeKubelet kubelet, Mark after, Process p, Path log) throws Exception {
    try {
      return kubelet.awaitRegistration(PLUGIN.resource, after, START);
    } catch (AssertionError e) {
      throw new AssertionError(
          "no registration of "
              + PLUGIN.resource
              + " (alive="
              + p.isAlive()
              + "); log:\n"
              + PluginProcessTest.read(log),
          e);
    }
  }
}
