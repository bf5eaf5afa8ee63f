package com.example.accel;

import static io.github.deviceplugin4j.testkit.assertj.KubeletAssertions.assertThat;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class AccelBackendTest {

  static final String RESOURCE = "example.com/accel";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);

  // tag::setup[]
  @RegisterExtension FakeKubeletExtension extension = FakeKubeletExtension.create();

  @TempDir Path root;

  FakeKubelet kubelet;
  DevicePluginHost host;

  @BeforeEach
  void startPlugin() throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
    Files.createFile(root.resolve("dev/accel1"));
    kubelet = extension.get();
    host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new AccelBackend(root))
            .start();
    kubelet.awaitDevices(RESOURCE, devices -> devices.size() == 2, WAIT);
  }

  @AfterEach
  void stopPlugin() {
    host.close();
  }

  // end::setup[]

  // tag::advertises[]
  @Test
  void advertisesEveryAccelerator() {
    assertThat(kubelet)
        .hasRegistered(RESOURCE)
        .hasCapacity(RESOURCE, 2)
        .hasAllocatable(RESOURCE, 2);
  }

  // end::advertises[]

  // tag::allocate[]
  @Test
  void aContainerGetsTheDeviceNodeAndTheVariable() {
    Allocation allocation = kubelet.allocate(RESOURCE, "accel1");

    assertThat(allocation)
        .isWellFormed()
        .hasDeviceNode("/dev/accel1", "rw")
        .hasEnv("ACCEL_VISIBLE_DEVICES", "accel1");
  }

  @Test
  void twoDevicesShareOneVariable() {
    Allocation allocation = kubelet.allocate(RESOURCE, "accel0", "accel1");

    assertThat(allocation).hasEnv("ACCEL_VISIBLE_DEVICES", "accel0,accel1");
  }

  // end::allocate[]

  // tag::health[]
  @Test
  void aFailedAcceleratorTurnsUnhealthy() throws IOException {
    Path sys = Files.createDirectories(root.resolve("sys/class/accel/accel1"));
    Files.writeString(sys.resolve("status"), "error");

    kubelet.awaitDevices(
        RESOURCE, devices -> devices.stream().filter(DeviceState::healthy).count() == 1, WAIT);
    assertThat(kubelet).hasCapacity(RESOURCE, 2).hasAllocatable(RESOURCE, 1);
  }

  // end::health[]

  // tag::restart[]
  @Test
  void registersAgainAfterAKubeletRestart() {
    Mark restarted = kubelet.restart();

    kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
    kubelet.awaitDevices(RESOURCE, devices -> devices.size() == 2, WAIT);
  }
  // end::restart[]
}
