package io.github.deviceplugin4j.docs.operations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The messages operations.md quotes in its troubleshooting table. */
class TroubleshootingTest {

  static final String RESOURCE = "example.com/accel";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path root;
  @TempDir Path dir;

  @BeforeEach
  void node() throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
  }

  private DevicePluginHost.Builder plugin(AccelBackend backend) {
    return DevicePluginHost.builder()
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(backend);
  }

  private String lastError(DevicePluginHost host) {
    Awaitility.await().atMost(WAIT).until(() -> host.status(RESOURCE).lastError().isPresent());
    return host.status(RESOURCE).lastError().orElseThrow();
  }

  @Test
  void noKubeletYet() {
    try (DevicePluginHost host = plugin(new AccelBackend(root)).start()) {
      assertThat(lastError(host))
          .isEqualTo(
              "waiting for the kubelet: "
                  + dir.resolve("kubelet.sock")
                  + " does not exist (kubelet not running, or the device plugin directory is not"
                  + " mounted)");
      assertThat(host.isReady()).isFalse();
    }
  }

  @Test
  void noCommonApiVersion() {
    try (FakeKubelet kubelet =
            FakeKubelet.builder().pluginDir(dir).supportedVersions("v1beta2").start();
        DevicePluginHost host = plugin(new AccelBackend(root)).start()) {
      assertThat(lastError(host))
          .isEqualTo(
              "no kubelet device plugin API version fits: the kubelet supports [v1beta2], this SDK"
                  + " speaks [v1beta1] (kubelet said: requested API version \"v1beta1\" is not"
                  + " supported by kubelet. Supported version is [\"v1beta2\"]); upgrade"
                  + " deviceplugin4j or the kubelet");
      assertThat(kubelet.registrations()).isEmpty();
    }
  }

  @Test
  void badResourceNameStopsTheStart() {
    AccelBackend backend =
        new AccelBackend(root) {
          @Override
          public String resourceName() {
            return "accel";
          }
        };
    assertThatThrownBy(() -> plugin(backend).start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageStartingWith("cannot start the device plugin: invalid resource name \"accel\"")
        .hasMessageEndingWith(": it has no domain: it must contain '/'");
  }

  @Test
  void missingPluginDirectoryStopsTheStart() {
    Path missing = dir.resolve("not-mounted");
    assertThatThrownBy(
            () ->
                DevicePluginHost.builder()
                    .pluginDir(missing)
                    .registrationMode(RegistrationMode.LEGACY)
                    .backend(new AccelBackend(root))
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessage(
            "cannot start the device plugin: plugin directory "
                + missing
                + " does not exist or is not a directory (mount the kubelet's directory, or set it"
                + " with the builder or DEVICE_PLUGIN_DIR)");
  }

  @Test
  void aListOverFourMebibytesKeepsTheLastGoodOne() throws Exception {
    List<Device> huge = new ArrayList<>();
    for (int i = 0; i < 55_000; i++) {
      huge.add(Device.builder(String.format("accel-%056d", i)).numaNode(i % 2).build());
    }
    boolean[] grow = {false};
    AccelBackend backend =
        new AccelBackend(root) {
          @Override
          public List<Device> devices() throws IOException {
            return grow[0] ? huge : super.devices();
          }
        };
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = plugin(backend).start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 1, WAIT);
      grow[0] = true;
      assertThat(lastError(host))
          .startsWith("backend returned invalid data in devices: the device list of 55000 devices")
          .contains("over the kubelet's limit of 4194304 bytes per message (kubernetes#109304)")
          .endsWith("the last good list of 1 devices stays");
      assertThat(kubelet.devices(RESOURCE)).hasSize(1);
    }
  }
}
