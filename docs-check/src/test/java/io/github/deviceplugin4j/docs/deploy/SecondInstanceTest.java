package io.github.deviceplugin4j.docs.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What deploying.md says about a rolling update with surge: the new instance serves its own socket
 * and registers; the old one stops registering and, when it is stopped, hands over: the new one
 * registers again at once.
 */
class SecondInstanceTest {

  static final String RESOURCE = "example.com/accel";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension FakeKubeletExtension extension = FakeKubeletExtension.create();
  @TempDir Path root;

  private DevicePluginHost.Builder instance(FakeKubelet kubelet) {
    return DevicePluginHost.builder()
        .pluginDir(kubelet.pluginDir())
        .registrationMode(RegistrationMode.LEGACY)
        .backend(new AccelBackend(root));
  }

  @Test
  void aSecondInstanceTakesOverAndTheFirstHandsOverWhenStopped() throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
    FakeKubelet kubelet = extension.get();
    try (DevicePluginHost second = startBoth(kubelet)) {
      Path socket = second.status(RESOURCE).socket();
      assertThat(socket.getFileName().toString()).matches("example\\.com_accel-[0-9a-f]{8}\\.sock");
      assertThat(Path.of(kubelet.registration(RESOURCE).orElseThrow().endpoint()))
          .isEqualTo(socket);
      assertThat(kubelet.allocate(RESOURCE, 1).deviceIds()).containsExactly("accel0");
    }
  }

  /** Starts the old instance, then the new one; stops the old one once the new one is ready. */
  private DevicePluginHost startBoth(FakeKubelet kubelet) {
    DevicePluginHost first = instance(kubelet).start();
    DevicePluginHost second;
    try (first) {
      await().atMost(WAIT).until(first::isReady);
      second = instance(kubelet).start();
      await().atMost(WAIT).until(() -> second.isReady() && !first.isReady());
    }
    int before = second.status(RESOURCE).registrations();
    await().atMost(WAIT).until(() -> second.status(RESOURCE).registrations() > before);
    await().atMost(WAIT).until(second::isReady);
    return second;
  }
}
