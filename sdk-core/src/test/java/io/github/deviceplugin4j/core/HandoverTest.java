package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two instances of one resource on one node (a rolling update with surge), here in one JVM: the
 * newer serves its own socket and registers; the older notices, stops registering and keeps its
 * connections until it is closed; then the newer registers again at once.
 */
class HandoverTest {

  private static final String RESOURCE = "example.com/dev";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;

  private final List<AutoCloseable> closeables = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    TestSupport.awaitNoCoreThreads();
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    closeables.add(c);
    return c;
  }

  private DevicePluginHost instance(Path pluginDir, String device) {
    return closeLater(
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(TestBackend.of(RESOURCE, device))
            .start());
  }

  @Test
  void aNewerInstanceTakesOver_andRegistersAgainWhenTheOlderStops() throws Exception {
    Path pluginDir = tmp.resolve("dp");
    FakeKubelet kubelet = closeLater(FakeKubelet.builder().pluginDir(pluginDir).start());
    DevicePluginHost old = instance(pluginDir, "d0");
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(old::isReady);
    Path oldSocket = old.status(RESOURCE).socket();
    Object oldInode = Files.getAttribute(oldSocket, "unix:ino");

    DevicePluginHost fresh = instance(pluginDir, "d0");

    Path freshSocket = fresh.status(RESOURCE).socket();
    assertThat(freshSocket).isNotEqualTo(oldSocket);
    assertThat(freshSocket.getParent()).isEqualTo(pluginDir);
    assertThat(freshSocket.getFileName().toString())
        .matches("example\\.com_dev-[0-9a-f]{8}\\.sock");
    await()
        .atMost(WAIT)
        .until(
            () ->
                kubelet
                    .registration(RESOURCE)
                    .map(r -> Path.of(r.endpoint()).equals(freshSocket))
                    .orElse(false));
    await().atMost(WAIT).until(() -> fresh.isReady() && !old.isReady());
    assertThat(Files.getAttribute(oldSocket, "unix:ino"))
        .as("the older instance's socket is left alone")
        .isEqualTo(oldInode);
    int before = fresh.status(RESOURCE).registrations();

    old.close();

    await().atMost(WAIT).until(() -> fresh.status(RESOURCE).registrations() == before + 1);
    Registration r = kubelet.registration(RESOURCE).orElseThrow();
    assertThat(Path.of(r.endpoint())).isEqualTo(freshSocket);
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
    await().atMost(WAIT).until(fresh::isReady);
    assertThat(Files.exists(oldSocket)).as("the older instance removed its socket").isFalse();
  }

  @Test
  void whenTheNewerInstanceGoesAwayFirst_theOlderRegistersAgain() throws Exception {
    Path pluginDir = tmp.resolve("dp");
    FakeKubelet kubelet = closeLater(FakeKubelet.builder().pluginDir(pluginDir).start());
    DevicePluginHost old =
        closeLater(
            DevicePluginHost.builder()
                .pluginDir(pluginDir)
                .registrationMode(RegistrationMode.LEGACY)
                .safetyCheckInterval(Duration.ofMillis(200))
                .backend(TestBackend.of(RESOURCE, "d0"))
                .start());
    kubelet.awaitRegistration(RESOURCE, WAIT);
    DevicePluginHost fresh = instance(pluginDir, "d0");
    await().atMost(WAIT).until(() -> fresh.isReady() && !old.isReady());

    fresh.close(); // the rollout was aborted

    await().atMost(WAIT).until(old::isReady);
    Path oldSocket = old.status(RESOURCE).socket();
    await()
        .atMost(WAIT)
        .until(
            () ->
                kubelet
                    .registration(RESOURCE)
                    .map(r -> Path.of(r.endpoint()).equals(oldSocket))
                    .orElse(false));
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
  }
}
