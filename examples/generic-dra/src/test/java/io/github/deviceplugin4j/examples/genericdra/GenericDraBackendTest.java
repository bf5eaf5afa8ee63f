package io.github.deviceplugin4j.examples.genericdra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.examples.generic.GenericConfig;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The DRA backend's own rules, on a fake tree without a kubelet or API server. */
class GenericDraBackendTest {
  @TempDir Path root;
  @TempDir Path run;

  @Test
  void twoResourcesWithTheSameShortNameAreRefusedNamingTheSecond() throws Exception {
    new DraTestNode(root, run);
    GenericDraBackend backend =
        new GenericDraBackend(DraTestNode.DRIVER, root, Duration.ofHours(1));
    GenericConfig config =
        GenericConfig.parse(
            """
            resources:
              - name: a.example.com/serial
                groups: [{paths: ["/dev/ttyUSB*"]}]
              - name: b.example.com/serial
                groups: [{paths: ["/dev/ttyS*"]}]
            """);

    assertThatThrownBy(() -> backend.apply(config))
        .hasMessageStartingWith("resources[1].name: b.example.com/serial and a.example.com/serial")
        .hasMessageContaining("must differ");
  }

  @Test
  void aSharedResourceIsPublishedOnceWithItsAttributes() throws Exception {
    new DraTestNode(root, run);
    GenericDraBackend backend =
        new GenericDraBackend(DraTestNode.DRIVER, root, Duration.ofHours(1));
    backend.apply(GenericConfig.parse(DraTestNode.THREE));

    assertThat(backend.devices())
        .extracting(Device::id)
        .containsExactly("nic-0000:17:00.0", "serial-ttyUSB0", "serial-ttyUSB1", "yubikey-usb-1-2");
    Device nic = backend.devices().get(0);
    assertThat(backend.attributes(nic))
        .containsEntry(GenericDraBackend.RESOURCE, "generic.example.com/nic")
        .containsEntry("pciAddress", "0000:17:00.0")
        .containsEntry("vendor", "8086");
    assertThat(nic.allocation().env()).containsEntry("PCI_DEVICES", "0000:17:00.0");
  }
}
