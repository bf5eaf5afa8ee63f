package io.github.deviceplugin4j.testkit.assertj;

import static io.github.deviceplugin4j.testkit.assertj.KubeletAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.MountSpec;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubeletAssertionsTest {
  @TempDir Path dir;

  @Test
  void assertsOnTheKubeletAndItsAllocations() {
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        TestPlugin plugin =
            new TestPlugin("example.com/a", dir.resolve("a.sock"))
                .devices(TestPlugin.healthyDevices(2))
                .start()) {
      plugin.register(kubelet.kubeletSocket());
      kubelet.awaitDevices("example.com/a", l -> l.size() == 2, Duration.ofSeconds(60));
      assertThat(kubelet)
          .hasRegistered("example.com/a")
          .hasCapacity("example.com/a", 2)
          .hasAllocatable("example.com/a", 2)
          .hasNoFailures();
      assertThat(kubelet.allocate("example.com/a", "dev-1"))
          .isWellFormed()
          .hasDeviceIds("dev-1")
          .hasDeviceCount(1)
          .hasEnv("TEST_DEVICES", "dev-1")
          .hasDeviceNode("/dev/dev-1", "rw")
          .hasMount(new MountSpec("/usr/local/test", "/opt/test/lib", true))
          .hasAnnotation("example.com/devices", "dev-1")
          .hasCdiDevices("example.com/test=dev-1");
      assertThatThrownBy(() -> assertThat(kubelet).hasAllocatable("example.com/a", 5))
          .hasMessageContaining("expected 5 allocatable example.com/a but it is 2")
          .hasMessageContaining("fake kubelet event log");
      assertThatThrownBy(() -> assertThat(kubelet).hasRegistered("example.com/none"))
          .hasMessageContaining("expected a connected plugin for example.com/none");
    }
  }

  @Test
  void reportsAMalformedAllocation() {
    Allocation bad =
        new Allocation(
            "example.com/a",
            "uid",
            "main",
            List.of("x"),
            Map.of(),
            List.of(),
            List.of(new DeviceSpec("/dev/x", "relative", "rw")),
            Map.of(),
            List.of());
    assertThatThrownBy(() -> assertThat(bad).isWellFormed())
        .hasMessageContaining("device host_path \"relative\" is not an absolute path");
    assertThatThrownBy(() -> assertThat(bad).hasDeviceIds("y"))
        .hasMessageContaining("expected device IDs [y] (any order) but got [x]");
  }
}
