package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.reliability.ProcessProbe.Usage;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubelet is absent when the plugin starts (3 s in the fast run, 30 s in the soak), then
 * appears: the plugin must keep serving meanwhile, without piling up threads or descriptors, and
 * register within 1 s of {@code kubelet.sock} appearing. The registration backoff keeps its default
 * (10 ms doubling to 10 s): after 30 s of absence a polling plugin would wait up to 10 s; the
 * directory watcher makes it event driven.
 */
class KubeletAbsentTest {

  static final String RESOURCE = "example.com/absent";

  @TempDir Path tmp;

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void kubeletAbsentAtStart_registersWithinOneSecondOfItsAppearance() throws Exception {
    int absent = Sizes.kubeletAbsentSeconds();
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    RecordingListener listener = new RecordingListener();
    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(ScriptedBackend.healthy(RESOURCE, 2))
            .listener(listener)
            .start()) {
      Path socket = host.status(RESOURCE).socket();
      Usage early;
      try (RawClient client = RawClient.connect(socket)) {
        early = Usage.now();
        // The kubelet stays away: the plugin keeps serving its socket and is not ready.
        await()
            .during(Duration.ofSeconds(absent))
            .atMost(Duration.ofSeconds(absent + 5))
            .pollInterval(Duration.ofMillis(250))
            .until(
                () ->
                    !host.isReady()
                        && client.blocking().getDevicePluginOptions(Empty.getDefaultInstance())
                            instanceof DevicePluginOptions);
      }
      Usage late = Usage.now();
      assertThat(host.status(RESOURCE).lastError())
          .hasValueSatisfying(e -> assertThat(e).contains("waiting for the kubelet"));

      try (FakeKubelet kubelet = FakeKubelet.start(dir)) {
        Instant appeared =
            kubelet.events().stream()
                .filter(e -> e.kind() == KubeletEvent.Kind.START)
                .findFirst()
                .orElseThrow()
                .time();
        Registration r = kubelet.awaitRegistration(RESOURCE, Duration.ofSeconds(15));
        double ms = Duration.between(appeared, r.at()).toNanos() / 1e6;
        Figures.print(
            String.format(
                "kubelet-absent absent=%ds registeredAfterAppearance=%.1fms"
                    + " whileAbsent fds %d->%d threads %d->%d",
                absent, ms, early.fds(), late.fds(), early.threads(), late.threads()));
        // Bounds with reasons: kubelet.sock's creation starts a registration at once; without that
        // event the plugin would wait for its backoff, 10 s after a long absence. Waiting must not
        // leak: one fd or thread per attempt would add dozens; a few are transient (an attempt's
        // connection or a worker alive when sampled).
        assertThat(ms).as("ms from kubelet.sock to registration").isLessThan(5000.0);
        assertThat(late.fds()).as("fds while waiting").isLessThanOrEqualTo(early.fds() + 8);
        assertThat(late.threads())
            .as("threads while waiting")
            .isLessThanOrEqualTo(early.threads() + 8);
        kubelet.awaitDevices(RESOURCE, l -> l.size() == 2, Duration.ofSeconds(60));
      }
    }
  }
}
