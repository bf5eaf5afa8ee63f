package io.github.deviceplugin4j.docs.host;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.accel.AccelBackend;
import com.example.accel.AccelPlugin;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.ResourceStatus;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.PodRequest;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The host features of deploying.md, operations.md and concepts.md. */
class HostTest {

  static final String RESOURCE = "example.com/accel";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension
  FakeKubeletExtension extension = FakeKubeletExtension.create().withRegistry().withPodResources();

  @TempDir Path root;
  FakeKubelet kubelet;

  @BeforeEach
  void node() throws IOException {
    kubelet = extension.get();
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
    Files.createFile(root.resolve("dev/accel1"));
  }

  @Test
  void theReadinessFileExistsWhileRegistered() throws Exception {
    Path ready = root.resolve("state/accel.ready");
    try (DevicePluginHost host =
        AccelPlugin.plugin(root, ready)
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .start()) {
      kubelet.awaitRegistration(RESOURCE, WAIT);
      org.awaitility.Awaitility.await().atMost(WAIT).until(() -> Files.exists(ready));
      assertThat(Files.readAllLines(ready)).containsExactly(RESOURCE);

      kubelet.dropConnection(RESOURCE);
      Mark restarted = kubelet.restart();
      kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
      org.awaitility.Awaitility.await().atMost(WAIT).until(() -> Files.exists(ready));
      assertThat(host.isReady()).isTrue();
    }
    assertThat(ready).doesNotExist();
  }

  @Test
  void statusAndListenerReportWhatHappens() {
    Metrics metrics = new Metrics();
    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new AccelBackend(root))
            .listener(metrics)
            .start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      Mark restarted = kubelet.restart();
      kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      org.awaitility.Awaitility.await()
          .atMost(WAIT)
          .until(() -> host.status(RESOURCE).registrations() == 2);

      // tag::status[]
      ResourceStatus status = host.status("example.com/accel");
      String line =
          String.format(
              "%s registered=%s mode=%s registrations=%d devices=%d healthy=%d lastError=%s",
              status.resourceName(),
              status.registered(),
              status.mode(),
              status.registrations(),
              status.totalDevices(),
              status.healthyDevices(),
              status.lastError().orElse("none"));
      // end::status[]
      // During the restart the plugin may have tried while kubelet.sock was gone: lastError keeps
      // that "waiting for the kubelet" note after the registration succeeded.
      assertThat(line)
          .startsWith(
              "example.com/accel registered=true mode=LEGACY registrations=2 devices=2 healthy=2"
                  + " lastError=")
          .satisfiesAnyOf(
              l -> assertThat(l).endsWith("lastError=none"),
              l -> assertThat(l).contains("lastError=waiting for the kubelet: "));
      assertThat(metrics.registrations.sum()).isEqualTo(2);
      assertThat(metrics.kubeletLost.sum()).isGreaterThanOrEqualTo(1);
      assertThat(metrics.healthy.get(RESOURCE)).hasValue(2);
      assertThat(metrics.errors.sum()).isZero();
    }
  }

  @Test
  void autoModeUsesThePluginWatcherWhenTheRegistryDirectoryExists() {
    // tag::auto-mode[]
    DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registryDir(kubelet.registryDir().orElseThrow()) // exists: AUTO picks the watcher
            .backend(new AccelBackend(root))
            .start();
    // end::auto-mode[]
    try (host) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      assertThat(host.registrationMode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
      assertThat(kubelet.registration(RESOURCE).orElseThrow().mode())
          .isEqualTo(io.github.deviceplugin4j.testkit.Registration.Mode.PLUGIN_WATCHER);
      Mark restarted = kubelet.restart();
      kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
    }
  }

  @Test
  void severalResourcesShareOneHost() {
    // tag::several[]
    List<DeviceBackend> backends =
        List.of(new AccelBackend(root), new ShareableAccelBackend(root, 4));
    DevicePluginHost.Builder builder = DevicePluginHost.builder();
    backends.forEach(builder::backend); // one socket per resource, one event loop for all
    // end::several[]
    try (DevicePluginHost host =
        builder.pluginDir(kubelet.pluginDir()).registrationMode(RegistrationMode.LEGACY).start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      kubelet.awaitDevices("example.com/accel-shared", d -> d.size() == 8, WAIT);
      assertThat(host.status()).hasSize(2);
      // The fake kubelet has the lists before the plugin has read the kubelet's answer to Register.
      org.awaitility.Awaitility.await().atMost(WAIT).until(host::isReady);
    }
  }

  @Test
  void podResourcesTellsWhichPodHoldsADevice() {
    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new AccelBackend(root))
            .start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      kubelet.allocate(PodRequest.devices(RESOURCE, "accel1").withPod("ml", "trainer-0", "uid-1"));
      Path socket = kubelet.podResourcesSocket().orElseThrow();
      assertThat(PodResourcesLookup.describe(socket, RESOURCE, "accel1"))
          .isEqualTo("accel1 is used by ml/trainer-0 (main)");
      assertThat(PodResourcesLookup.describe(socket, RESOURCE, "accel0"))
          .isEqualTo("accel0 is free");
      org.awaitility.Awaitility.await().atMost(WAIT).until(host::isReady);
    }
  }
}
