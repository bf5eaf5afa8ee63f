package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.reliability.ProcessProbe.Usage;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kubelet restarts in a row, in legacy and in plugin-watcher mode: every restart must be followed
 * by a re-registration (none missed), the delay from the new {@code kubelet.sock} to the
 * registration is reported as p50/p99/max, and file descriptors, threads and heap after GC must be
 * as flat after the run as before it.
 */
class KubeletRestartTest {

  static final String RESOURCE = "example.com/restart";
  static final int WARM_UP = 5;
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration STEP = Duration.ofSeconds(60);

  /**
   * Heap growth allowed: 1 MiB, plus 4 KiB per restart (or other kubelet event) for what the fake
   * kubelet in the same JVM keeps by design: its event log and registration history, about 3 KiB
   * per restart. A class histogram after 1,000 restarts showed no class of the plugin side growing.
   */
  static double heapToleranceMiB(int events) {
    return 1.0 + events * 4.0 / 1024;
  }

  @TempDir Path tmp;

  @Test
  @Timeout(value = 20, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void legacyMode_reRegistersAfterEveryRestart_resourcesStayFlat() {
    Path dir = tmp.resolve("dp");
    try (FakeKubelet kubelet = FakeKubelet.start(dir)) {
      run("legacy", Sizes.legacyRestarts(), kubelet, RegistrationMode.LEGACY, null);
    }
  }

  @Test
  @Timeout(value = 20, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void pluginWatcherMode_reRegistersAfterEveryRestart_resourcesStayFlat() {
    Path dir = tmp.resolve("dp");
    Path registry = tmp.resolve("reg");
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir).registryDir(registry).start()) {
      run("watcher", Sizes.watcherRestarts(), kubelet, RegistrationMode.PLUGIN_WATCHER, registry);
    }
  }

  private void run(
      String name, int restarts, FakeKubelet kubelet, RegistrationMode mode, Path registry) {
    RecordingListener listener = new RecordingListener();
    DevicePluginHost.Builder builder =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(mode)
            .backend(ScriptedBackend.healthy(RESOURCE, 4))
            .listener(listener);
    if (registry != null) {
      builder.registryDir(registry);
    }
    List<Double> delays = new ArrayList<>();
    int missed = 0;
    Usage before;
    Usage after;
    double settled;
    try (DevicePluginHost host = builder.start()) {
      kubelet.awaitRegistration(RESOURCE, STEP);
      fast().until(host::isReady);
      for (int i = 0; i < WARM_UP; i++) {
        restartOnce(kubelet, host, listener);
      }
      before = Usage.now();
      for (int i = 0; i < restarts; i++) {
        double ms = restartOnce(kubelet, host, listener);
        if (ms < 0) {
          missed++;
        } else {
          delays.add(ms);
        }
      }
      // Servers replaced by a restart are closed 10 s later and dropped 1 s after that: measure
      // the heap once the last ones are gone.
      settled = settle(before, heapToleranceMiB(WARM_UP + restarts), Duration.ofSeconds(12));
      after = Usage.now();
      assertThat(kubelet.awaitDevices(RESOURCE, l -> l.size() == 4, STEP)).hasSize(4);
    }
    Figures.print(
        String.format(
            "restarts %s n=%d missed=%d %s %s (settled %.0fs)",
            name, restarts, missed, Figures.latency(delays), before.to(after), settled));
    assertThat(missed).as("restarts without a re-registration within %s", STEP).isZero();
    assertThat(listener.registered.get())
        .as("registrations the plugin saw")
        .isEqualTo(1 + WARM_UP + restarts);
    assertThat(after.fds()).as("open file descriptors").isBetween(0, before.fds() + 2);
    assertThat(after.threads()).as("live threads").isBetween(0, before.threads() + 2);
    // The fake kubelet keeps its event log and registrations (about 3 KiB per restart) by design.
    assertThat(after.heapMiB() - before.heapMiB())
        .as("heap growth, MiB")
        .isLessThan(heapToleranceMiB(WARM_UP + restarts));
  }

  /**
   * Waits (at least {@code atLeast}, then at most 2 minutes more) for what a burst of restarts
   * leaves behind to go: idle pool threads end after 60 s, replaced servers are released 11 s after
   * their replacement.
   *
   * @return seconds waited
   */
  static double settle(Usage before, double heapToleranceMiB, Duration atLeast) {
    long t0 = System.nanoTime();
    try {
      await()
          .pollDelay(atLeast)
          .atMost(Duration.ofMinutes(2).plus(atLeast))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () ->
                  ProcessProbe.openFileDescriptors() <= before.fds() + 2
                      && ProcessProbe.liveThreads() <= before.threads() + 2
                      && ProcessProbe.heapAfterGcMiB() - before.heapMiB() < heapToleranceMiB);
    } catch (org.awaitility.core.ConditionTimeoutException notFlat) {
      // measured and asserted by the caller, with the figure printed first
    }
    return (System.nanoTime() - t0) / 1e9;
  }

  /**
   * Restarts the kubelet and waits for the plugin to register again.
   *
   * @return the delay from the new kubelet.sock to the registration in ms, or -1 when it was missed
   */
  private static double restartOnce(
      FakeKubelet kubelet, DevicePluginHost host, RecordingListener listener) {
    int seen = listener.registered.get();
    Mark served = kubelet.restart();
    try {
      Registration r = kubelet.awaitRegistration(RESOURCE, served, STEP);
      fast().until(() -> listener.registered.get() > seen && host.isReady());
      return (r.nanos()
              - kubelet
                  .awaitEvent(
                      served,
                      e ->
                          e.kind() == KubeletEvent.Kind.RESTART
                              && e.outcome() == KubeletEvent.Outcome.OK,
                      STEP)
                  .nanos())
          / 1e6;
    } catch (AssertionError | org.awaitility.core.ConditionTimeoutException e) {
      // Missed: counted and reported; let it recover before the next restart.
      await().atMost(Duration.ofSeconds(60)).until(host::isReady);
      return -1;
    }
  }

  static ConditionFactory fast() {
    return await()
        .atMost(STEP)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1))
        .pollInSameThread();
  }
}
