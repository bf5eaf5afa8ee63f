package io.github.deviceplugin4j.docs.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.ConfigurationException;
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
 * What deploying.md says about a rolling update with surge: a second instance on the same socket
 * refuses to start and leaves the first one serving.
 */
class SecondInstanceTest {

  static final String RESOURCE = "example.com/accel";

  @RegisterExtension FakeKubeletExtension extension = FakeKubeletExtension.create();
  @TempDir Path root;

  private DevicePluginHost.Builder instance(FakeKubelet kubelet) {
    return DevicePluginHost.builder()
        .pluginDir(kubelet.pluginDir())
        .registrationMode(RegistrationMode.LEGACY)
        .backend(new AccelBackend(root));
  }

  @Test
  void aSecondInstanceRefusesToStartAndTheFirstKeepsServing() throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
    FakeKubelet kubelet = extension.get();
    try (DevicePluginHost first = instance(kubelet).start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 1, Duration.ofSeconds(10));

      assertThatThrownBy(() -> instance(kubelet).start())
          .isInstanceOf(ConfigurationException.class)
          .hasMessage(
              "another live process is serving "
                  + kubelet.pluginDir().resolve("example.com_accel.sock")
                  + " (a second instance of this plugin?); stop it first: two plugins for one"
                  + " resource would keep replacing each other at the kubelet");

      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(first::isReady);
      assertThat(kubelet.allocate(RESOURCE, 1).deviceIds()).containsExactly("accel0");
    }
  }
}
