package io.github.deviceplugin4j.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.Mount;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CdiSpecTest {

  @TempDir Path dir;

  private static CdiSpec fpgaSpec() {
    return CdiSpec.builder("vendor.example.com/fpga")
        .device(
            "port0",
            ContainerAllocation.builder()
                .deviceNode(DeviceNode.rw("/dev/dfl-port.0"))
                .mount(Mount.readOnly("/opt/afu"))
                .env("FPGA_PORT", "0")
                .build())
        .device("port1", ContainerAllocation.builder().env("NOTE", "say \"hi\"\n").build())
        .build();
  }

  @Test
  void writesTheCdiJsonLayout() {
    assertThat(fpgaSpec().toJson())
        .isEqualTo(
            """
            {
              "cdiVersion" : "0.6.0",
              "kind" : "vendor.example.com/fpga",
              "devices" : [ {
                "name" : "port0",
                "containerEdits" : {
                  "env" : [ "FPGA_PORT=0" ],
                  "deviceNodes" : [ {
                    "path" : "/dev/dfl-port.0",
                    "hostPath" : "/dev/dfl-port.0",
                    "permissions" : "rw"
                  } ],
                  "mounts" : [ {
                    "hostPath" : "/opt/afu",
                    "containerPath" : "/opt/afu",
                    "options" : [ "ro", "nosuid", "nodev", "bind" ]
                  } ]
                }
              }, {
                "name" : "port1",
                "containerEdits" : {
                  "env" : [ "NOTE=say \\"hi\\"\\n" ]
                }
              } ]
            }
            """);
  }

  @Test
  void qualifiedNamesAndFileNameFollowTheCdiConventions() {
    CdiSpec spec = fpgaSpec();

    assertThat(spec.qualifiedName("port1")).isEqualTo("vendor.example.com/fpga=port1");
    assertThat(spec.fileName()).isEqualTo("vendor.example.com-fpga.json");
    assertThat(spec.deviceNames()).containsExactly("port0", "port1");
    assertThatThrownBy(() -> spec.qualifiedName("port9"))
        .hasMessageContaining("no device 'port9'")
        .hasMessageContaining("[port0, port1]");
  }

  @Test
  void writeIsAtomicWithMode0644AndReplacesTheOldSpec() throws IOException {
    CdiSpecDirectory cdi = CdiSpecDirectory.at(dir.resolve("cdi"));

    Path first = cdi.write(fpgaSpec());
    CdiSpec smaller =
        CdiSpec.builder("vendor.example.com/fpga")
            .device("port0", ContainerAllocation.builder().env("A", "1").build())
            .build();
    Path second = cdi.write(smaller);

    assertThat(second).isEqualTo(first).isEqualTo(dir.resolve("cdi/vendor.example.com-fpga.json"));
    assertThat(Files.readString(second)).isEqualTo(smaller.toJson());
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(second)))
        .isEqualTo("rw-r--r--");
    try (Stream<Path> files = Files.list(dir.resolve("cdi"))) {
      assertThat(files).containsExactly(second);
    }
  }

  @Test
  void removeDeletesTheSpecOfAKind() throws IOException {
    CdiSpecDirectory cdi = CdiSpecDirectory.at(dir);
    Path file = cdi.write(fpgaSpec());

    assertThat(cdi.remove("vendor.example.com/fpga")).isTrue();
    assertThat(file).doesNotExist();
    assertThat(cdi.remove("vendor.example.com/fpga")).isFalse();
  }

  @Test
  void transientSpecsOfOneKindLiveSideBySideUnderTheirOwnIds() throws IOException {
    CdiSpecDirectory cdi = CdiSpecDirectory.at(dir);
    Path a = cdi.write(fpgaSpec(), "claim-1111");
    Path b = cdi.write(fpgaSpec(), "claim-2222");

    assertThat(a.getFileName()).hasToString("vendor.example.com-fpga_claim-1111.json");
    assertThat(b).exists();
    assertThat(Files.getPosixFilePermissions(a))
        .isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
    assertThat(cdi.remove("vendor.example.com/fpga", "claim-1111")).isTrue();
    assertThat(a).doesNotExist();
    assertThat(b).exists();
    assertThat(cdi.remove("vendor.example.com/fpga", "claim-1111")).isFalse();
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(b);
    }
  }

  @Test
  void refusesATransientIdThatCouldLeaveTheDirectory() {
    CdiSpecDirectory cdi = CdiSpecDirectory.at(dir);
    assertThatThrownBy(() -> cdi.write(fpgaSpec(), "../x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'../x'");
    assertThatThrownBy(() -> cdi.remove("vendor.example.com/fpga", ""))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void refusesWhatARuntimeWouldRefuseNamingEveryProblem() {
    CdiSpec.Builder bad =
        CdiSpec.builder("vendor.example.com/fpga")
            .device(
                "-port",
                ContainerAllocation.builder()
                    .env("1BAD", "x")
                    .deviceNode(new DeviceNode("dev/x", "/dev/../etc/x", "rwx"))
                    .mount(new Mount("/c", "relative", false))
                    .annotation("a", "b")
                    .cdiDevice("vendor.example.com/fpga=other")
                    .build());

    assertThatThrownBy(bad::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("CDI device name \"vendor.example.com/fpga=-port\"")
        .hasMessageContaining("environment variable name \"1BAD\" is invalid")
        .hasMessageContaining("device node container path \"dev/x\" is not absolute")
        .hasMessageContaining("device node host path \"/dev/../etc/x\" contains a '..' segment")
        .hasMessageContaining("contain 'x' (only r, w and m are allowed)")
        .hasMessageContaining("mount host path \"relative\" is not absolute")
        .hasMessageContaining("annotations cannot be expressed")
        .hasMessageContaining("cannot refer to other CDI devices");
  }

  @Test
  void refusesAnEmptySpecAndADuplicateDevice() {
    assertThatThrownBy(() -> CdiSpec.builder("vendor.example.com/fpga").build())
        .hasMessageContaining("at least one device");
    assertThatThrownBy(
            () ->
                CdiSpec.builder("vendor.example.com/fpga")
                    .device("a", ContainerAllocation.empty())
                    .device("a", ContainerAllocation.empty()))
        .hasMessageContaining("already has a device named 'a'");
  }

  @Test
  void fromDevicesAndReferencingMoveTheEditsIntoTheSpec() {
    List<Device> devices =
        List.of(
            Device.builder("port0")
                .numaNode(1)
                .deviceNode(DeviceNode.rw("/dev/dfl-port.0"))
                .build(),
            Device.builder("port1").health(Health.UNHEALTHY).env("PORT", "1").build());

    CdiSpec spec = CdiSpec.fromDevices("vendor.example.com/fpga", devices);
    List<Device> published = spec.referencing(devices);

    assertThat(spec.edits("port0").deviceNodes()).containsExactly(DeviceNode.rw("/dev/dfl-port.0"));
    assertThat(spec.edits("port1").env()).containsEntry("PORT", "1");
    assertThat(published).extracting(Device::id).containsExactly("port0", "port1");
    assertThat(published.get(0).numaNodes()).containsExactly(1);
    assertThat(published.get(1).health()).isEqualTo(Health.UNHEALTHY);
    assertThat(published.get(0).allocation())
        .isEqualTo(
            ContainerAllocation.builder().cdiDevice("vendor.example.com/fpga=port0").build());
    assertThatThrownBy(() -> spec.referencing(List.of(Device.healthy("port7"))))
        .hasMessageContaining("no device 'port7'");
  }

  @Test
  void refusesAnInvalidKind() {
    assertThatThrownBy(
            () -> CdiSpec.builder("no-slash").device("a", ContainerAllocation.empty()).build())
        .hasMessageContaining("CDI device name \"no-slash=a\" has no '/'");
  }
}
