package io.github.deviceplugin4j.docs.backend;

import static io.github.deviceplugin4j.testkit.assertj.KubeletAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.cdi.CdiSpecDirectory;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.MountSpec;
import io.github.deviceplugin4j.testkit.PodRequest;
import io.github.deviceplugin4j.testkit.Registration;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletExtension;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** What writing-a-backend.md says each optional capability does, checked against the kubelet. */
class CapabilitiesTest {

  static final String RESOURCE = "example.com/accel";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension FakeKubeletExtension extension = FakeKubeletExtension.create();
  @TempDir Path root;
  FakeKubelet kubelet;
  DevicePluginHost host;

  @BeforeEach
  void node() throws IOException {
    kubelet = extension.get();
    Nodes.accelerator(root, "accel0", 0, "ok");
    Nodes.accelerator(root, "accel1", 0, "ok");
    Nodes.accelerator(root, "accel2", 1, "ok");
    Nodes.accelerator(root, "accel3", 1, "ok");
  }

  @AfterEach
  void stop() {
    if (host != null) {
      host.close();
    }
  }

  private Registration start(DeviceBackend backend) {
    host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .backend(backend)
            .start();
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
    return kubelet.awaitRegistration(RESOURCE, WAIT);
  }

  @Test
  void devicesAsDataNeedNoAllocateCodeAndAdvertiseNoOption() {
    Registration r = start(new com.example.accel.AccelBackend(root));
    assertThat(r.preStartRequired()).isFalse();
    assertThat(r.preferredAllocationAvailable()).isFalse();
    assertThat(kubelet.devices(RESOURCE))
        .extracting(d -> d.id() + "@" + d.numaNodes())
        .containsExactly("accel0@[0]", "accel1@[0]", "accel2@[1]", "accel3@[1]");
  }

  @Test
  void anAllocatorExtendsTheDefaultAllocation() {
    start(new ResettingAccelBackend(root));
    Allocation a = kubelet.allocate(RESOURCE, "accel0", "accel2");
    assertThat(a)
        .isWellFormed()
        .hasDeviceNode("/dev/accel0", "rw")
        .hasDeviceNode("/dev/accel2", "rw")
        .hasEnv("ACCEL_VISIBLE_DEVICES", "accel0,accel2")
        .hasEnv("ACCEL_COUNT", "2")
        .hasMount(new MountSpec("/opt/accel/firmware", "/opt/accel/firmware", true));
  }

  @Test
  void aPreferredAllocatorIsAdvertisedAndKeepsAContainerOnOneNumaNode() {
    Registration r = start(new NumaAccelBackend(root));
    assertThat(r.preferredAllocationAvailable()).isTrue();
    Allocation a = kubelet.allocate(PodRequest.count(RESOURCE, 2).withMustInclude("accel2"));
    assertThat(a.deviceIds()).containsExactlyInAnyOrder("accel2", "accel3");
  }

  @Test
  void aPreStartHookIsAdvertisedAndItsRefusalReachesTheKubelet() throws IOException {
    Registration r = start(new SelfTestingAccelBackend(root));
    assertThat(r.preStartRequired()).isTrue();
    assertThat(kubelet.allocate(RESOURCE, "accel0")).isWellFormed();

    // The device fails after the last scan, before the container starts.
    Files.writeString(root.resolve("sys/class/accel/accel1/status"), "ecc-error");
    assertThatThrownBy(() -> kubelet.allocate(RESOURCE, "accel1"))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.rpc()).isIn("Allocate", "PreStartContainer");
              assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            });
  }

  @Test
  void aHotplugBackendPublishesNewDevicesWithoutPolling() throws IOException {
    start(new HotplugAccelBackend(root));
    Nodes.accelerator(root, "accel4", 1, "ok");
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 5, WAIT);
    Files.delete(root.resolve("dev/accel0"));
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
  }

  @Test
  void aCdiBackendWritesTheSpecAndAnswersWithCdiNames() throws IOException {
    Path cdiDir = root.resolve("cdi");
    start(new CdiAccelBackend(root, CdiSpecDirectory.at(cdiDir)));
    Allocation a = kubelet.allocate(RESOURCE, "accel1");
    assertThat(a).isWellFormed().hasCdiDevices("example.com/accel=accel1");
    assertThat(a.devices()).isEmpty();
    String spec = Files.readString(cdiDir.resolve("example.com-accel.json"));
    assertThat(spec).contains("\"kind\"").contains("example.com/accel").contains("/dev/accel1");
    host.close();
    host = null;
    assertThat(cdiDir.resolve("example.com-accel.json")).doesNotExist();
  }
}
