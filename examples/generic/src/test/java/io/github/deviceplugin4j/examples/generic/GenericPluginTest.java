package io.github.deviceplugin4j.examples.generic;

import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.WAIT;
import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.unhealthy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.examples.fixtures.GenericNode;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The generic plugin on fake sysfs/devfs trees against the fake kubelet, over real sockets. */
class GenericPluginTest {
  static final String SERIAL = "generic.example.com/serial";
  static final String KEY = "generic.example.com/yubikey";
  static final String NIC = "generic.example.com/nic";
  static final String AUDIO = "generic.example.com/audio";

  static final String THREE = GenericNode.THREE;
  static final String FOUR = GenericNode.FOUR;

  @TempDir Path root;
  @TempDir Path run;
  Path config;
  SysfsTree tree;
  FakeKubelet kubelet;
  GenericPlugin plugin;

  @BeforeEach
  void start() throws Exception {
    tree = GenericNode.write(SysfsTree.create(root));
    config = Files.createDirectory(run.resolve("etc")).resolve("config.yaml");
    Files.writeString(config, THREE);
    kubelet = FakeKubelet.start(run.resolve("dp"));
    plugin =
        GenericPlugin.start(
            config,
            root,
            Duration.ofHours(1),
            b -> b.pluginDir(kubelet.pluginDir()).registrationMode(RegistrationMode.LEGACY));
  }

  @AfterEach
  void stop() {
    if (plugin != null) {
      plugin.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
  }

  private void awaitThreeRegistered() {
    for (String r : List.of(SERIAL, KEY, NIC)) {
      kubelet.awaitRegistration(r, WAIT);
    }
  }

  @Test
  void threeGroupsRegisterThreeResourcesAndAllocateAsConfigured() {
    kubelet.awaitDevices(SERIAL, d -> d.size() == 4, WAIT);
    kubelet.awaitDevices(KEY, d -> d.size() == 2, WAIT);
    kubelet.awaitDevices(NIC, d -> d.size() == 2, WAIT);
    assertThat(kubelet.registrations())
        .extracting(Registration::resourceName)
        .containsExactlyInAnyOrder(SERIAL, KEY, NIC);

    Allocation serial = kubelet.allocate(SERIAL, "ttyUSB1::0", "ttyUSB1::1");
    assertThat(serial.devices())
        .containsExactly(new DeviceSpec("/dev/ttyUSB1", "/dev/ttyUSB1", "rw"));
    assertThat(serial.envs()).containsEntry("SERIAL", "yes");

    Allocation key = kubelet.allocate(KEY, 1);
    assertThat(key.devices())
        .containsExactly(new DeviceSpec("/dev/bus/usb/001/004", "/dev/bus/usb/001/004", "rw"));
    assertThat(key.envs()).containsEntry("USB_DEVICES", "1-2");

    Allocation nic = kubelet.allocate(NIC, 1);
    assertThat(nic.deviceIds()).singleElement().asString().startsWith("0000:17:00.0::");
    assertThat(nic.devices())
        .containsExactly(new DeviceSpec("/dev/vfio/vfio", "/dev/vfio/vfio", "rw"));
    assertThat(nic.envs()).containsEntry("PCI_DEVICES", "0000:17:00.0");
    assertThat(kubelet.awaitDevices(NIC, d -> d.size() == 2, WAIT))
        .allSatisfy(d -> assertThat(d.numaNodes()).containsExactly(1L));
  }

  @Test
  void aConfigChangeAddsAResourceWithoutReRegisteringTheOthers() throws Exception {
    awaitThreeRegistered();
    Mark before = kubelet.mark();

    Files.writeString(config, FOUR);

    kubelet.awaitRegistration(AUDIO, before, WAIT);
    kubelet.awaitDevices(AUDIO, d -> d.size() == 1, WAIT);
    assertThat(kubelet.registrations())
        .filteredOn(r -> r.isAfter(before))
        .extracting(Registration::resourceName)
        .containsExactly(AUDIO);
    assertThat(plugin.hosts()).hasSize(4);
  }

  @Test
  void aChangedGroupSendsNewDevicesOnTheSameRegistration() throws Exception {
    awaitThreeRegistered();
    kubelet.awaitDevices(SERIAL, d -> d.size() == 4, WAIT);
    Mark before = kubelet.mark();

    Files.writeString(config, THREE.replace("/dev/ttyUSB*", "/dev/ttyUSB0"));

    kubelet.awaitDevices(SERIAL, d -> d.size() == 2, WAIT);
    assertThat(kubelet.registrations()).noneMatch(r -> r.isAfter(before));
  }

  @Test
  void aBrokenConfigIsRefusedNamingTheKeyAndTheOldOneServes() throws Exception {
    awaitThreeRegistered();
    kubelet.awaitDevices(KEY, d -> d.size() == 2, WAIT);
    Mark before = kubelet.mark();

    Files.writeString(config, THREE.replace("vendor: \"1050\"", "vendor: 1050"));

    await().atMost(WAIT).until(() -> plugin.lastError().contains("usb[0].vendor"));
    assertThat(plugin.lastError())
        .startsWith("resources[1].groups[0].usb[0].vendor: ")
        .contains("quote it");
    assertThat(kubelet.allocate(KEY, 1).devices()).hasSize(1);
    assertThat(kubelet.registrations()).noneMatch(r -> r.isAfter(before));
    assertThat(plugin.hosts()).hasSize(3);

    Files.writeString(config, FOUR);
    kubelet.awaitRegistration(AUDIO, before, WAIT);
    assertThat(plugin.lastError()).isEmpty();
  }

  @Test
  void aMissingNodeMakesTheDeviceAndItsReplicasUnhealthy() {
    kubelet.awaitDevices(KEY, d -> d.size() == 2 && unhealthy(d).isEmpty(), WAIT);

    tree.delete(root.resolve("dev/bus/usb/001/004"));
    plugin.rescan();

    kubelet.awaitDevices(KEY, d -> unhealthy(d).equals(Set.of("usb-1-2::0", "usb-1-2::1")), WAIT);
    assertThat(kubelet.allocatable(KEY)).isZero();
  }
}
