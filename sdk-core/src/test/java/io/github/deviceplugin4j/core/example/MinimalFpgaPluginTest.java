package io.github.deviceplugin4j.core.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MinimalFpgaPluginTest {

  @TempDir Path dir;

  @Test
  void isAtMostThirtyLinesAndWorksAgainstTheKubelet() throws Exception {
    Path source =
        Path.of("src/test/java/io/github/deviceplugin4j/core/example/MinimalFpgaPlugin.java");
    assertThat(Files.readAllLines(source)).hasSizeLessThanOrEqualTo(30);

    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registryDir(dir.resolve("none"))
                .backend(new MinimalFpgaPlugin())
                .start()) {
      kubelet.awaitDevices("vendor.example.com/fpga", d -> d.size() == 2, Duration.ofSeconds(60));
      Allocation a = kubelet.allocate("vendor.example.com/fpga", "port1");
      assertThat(a.devices())
          .extracting(DeviceSpec::hostPath, DeviceSpec::containerPath, DeviceSpec::permissions)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple("/dev/dfl-port.1", "/dev/dfl-port.1", "rw"));
      assertThat(host.status()).hasSize(1);
      assertThat(List.of(a.deviceIds())).containsExactly(List.of("port1"));
    }
  }
}
