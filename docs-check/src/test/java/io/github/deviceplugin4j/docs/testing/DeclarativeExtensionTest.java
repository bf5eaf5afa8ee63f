package io.github.deviceplugin4j.docs.testing;

import static io.github.deviceplugin4j.testkit.assertj.KubeletAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

// tag::declarative[]
@FakeKubeletTest(registry = true)
class DeclarativeExtensionTest {

  @TempDir Path root;

  @Test
  void registersThroughThePluginWatcher(FakeKubelet kubelet) throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));

    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registryDir(kubelet.registryDir().orElseThrow())
            .backend(new AccelBackend(root))
            .start()) {
      kubelet.awaitDevices("example.com/accel", list -> list.size() == 1, Duration.ofSeconds(60));
      assertThat(kubelet).hasRegistered("example.com/accel").hasNoFailures();
      assertThat(host.registrationMode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
    }
  }
}
// end::declarative[]
