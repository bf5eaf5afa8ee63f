package io.github.deviceplugin4j.docs.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fake kubelet without the JUnit extension, as testing.md shows it. */
class PlainFakeKubeletTest {

  @TempDir Path root;
  @TempDir Path pluginDir;

  @Test
  void anAcceleratorIsAllocated() throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
    // tag::plain[]
    try (FakeKubelet kubelet = FakeKubelet.start(pluginDir);
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(pluginDir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(new AccelBackend(root))
                .start()) {
      kubelet.awaitRegistration("example.com/accel", Duration.ofSeconds(60));
      kubelet.awaitDevices("example.com/accel", list -> list.size() == 1, Duration.ofSeconds(60));

      Allocation allocation = kubelet.allocate("example.com/accel", 1);

      assertThat(allocation.deviceIds()).containsExactly("accel0");
      assertThat(allocation.problems()).isEmpty(); // absolute paths, r/w/m, env and CDI names
      assertThat(host.status("example.com/accel").totalDevices()).isEqualTo(1);
    }
    // end::plain[]
    try (var files = Files.list(pluginDir)) {
      assertThat(files).noneMatch(f -> f.toString().endsWith(".sock")); // sockets removed
    }
  }
}
