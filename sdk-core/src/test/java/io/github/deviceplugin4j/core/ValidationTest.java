package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.state.Validation;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ValidationTest {

  @Test
  void deviceIdProblem_namesAsciiAndLatin1ControlCharactersAsQuestionMarks() {
    assertThat(Validation.deviceIdProblem("fpga\t0"))
        .isEqualTo("device ID \"fpga?0\" contains a control character");
    assertThat(Validation.deviceIdProblem("fpga\u00850"))
        .isEqualTo("device ID \"fpga?0\" contains a control character");
    assertThat(Validation.deviceIdProblem("fpga-\u00a00")).isNull();
  }

  static Stream<Arguments> badAllocations() {
    return Stream.of(
        Arguments.of(
            ContainerAllocation.builder().deviceNode(DeviceNode.rw("dev/x")).build(),
            "device node container path \"dev/x\" is not absolute"),
        Arguments.of(
            ContainerAllocation.builder()
                .deviceNode(new DeviceNode("/dev/x", "/dev/../etc/shadow", "rw"))
                .build(),
            "device node host path \"/dev/../etc/shadow\" contains a '..' segment"),
        Arguments.of(
            ContainerAllocation.builder().deviceNode(new DeviceNode("", "/dev/x", "rw")).build(),
            "device node container path \"\" is empty"),
        Arguments.of(
            ContainerAllocation.builder().deviceNode(DeviceNode.of("/dev/x", "")).build(),
            "permissions are empty"),
        Arguments.of(
            ContainerAllocation.builder().deviceNode(DeviceNode.of("/dev/x", "rwx")).build(),
            "permissions \"rwx\" contain 'x'"),
        Arguments.of(
            ContainerAllocation.builder().deviceNode(DeviceNode.of("/dev/x", "rr")).build(),
            "permissions \"rr\" repeat 'r'"),
        Arguments.of(
            ContainerAllocation.builder().mount(new Mount("/data", "data", true)).build(),
            "mount host path \"data\" is not absolute"),
        Arguments.of(
            ContainerAllocation.builder().mount(new Mount("/a/../b", "/data", true)).build(),
            "mount container path \"/a/../b\" contains a '..' segment"),
        Arguments.of(
            ContainerAllocation.builder().env("1ABC", "x").build(),
            "environment variable name \"1ABC\" is invalid"),
        Arguments.of(
            ContainerAllocation.builder().env("A-B", "x").build(),
            "environment variable name \"A-B\" is invalid"),
        Arguments.of(
            ContainerAllocation.builder().env("", "x").build(),
            "environment variable name \"\" is invalid"),
        Arguments.of(
            ContainerAllocation.builder().annotation("", "x").build(), "annotation key is empty"),
        Arguments.of(
            ContainerAllocation.builder().cdiDevice("vendor.com/fpga").build(),
            "CDI device name \"vendor.com/fpga\" has no '='"));
  }

  @ParameterizedTest
  @MethodSource("badAllocations")
  void rejectsBadAllocationContent(ContainerAllocation allocation, String problem) {
    assertThat(Validation.allocationProblems(allocation)).anyMatch(p -> p.contains(problem));
  }

  @Test
  void acceptsGoodAllocationContent() {
    ContainerAllocation ok =
        ContainerAllocation.builder()
            .deviceNode(DeviceNode.rw("/dev/dfl-port.0"))
            .deviceNode(new DeviceNode("/dev/x", "/dev/y", "rwm"))
            .mount(Mount.readOnly("/opt/vendor/lib"))
            .env("_FPGA_PORT1", "0")
            .annotation("vendor.example.com/port", "0")
            .cdiDevice("vendor.example.com/fpga=port0")
            .build();
    assertThat(Validation.allocationProblems(ok)).isEmpty();
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "/..,               contains a '..' segment",
    "/a/..,             contains a '..' segment",
    "/a/../b,           contains a '..' segment",
    "/a//..//b,         contains a '..' segment",
    "/a/...,            ",
    "/a/..b,            ",
    "/a/b..,            ",
    "/a.. /b,           ",
    "/..../x,           ",
    "/,                 ",
  })
  void findsDotDotSegmentsOnlyWhereTheyAreWholeSegments(String path, String problem) {
    assertThat(Validation.pathProblem(path)).isEqualTo(problem);
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "r, true",
    "rw, true",
    "rwm, true",
    "mwr, true",
    "m, true",
    "rwr, false",
    "mm, false",
    "rW, false",
    "' r', false"
  })
  void permissionsAreDistinctLettersOfRwm(String permissions, boolean ok) {
    assertThat(Validation.permissionsProblem(permissions) == null).isEqualTo(ok);
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "A, true",
    "_, true",
    "a_1, true",
    "_9, true",
    "ABC_DEF9, true",
    "9A, false",
    "A.B, false",
    "Ä, false",
    "' A', false"
  })
  void environmentNamesArePosixNames(String name, boolean ok) {
    ContainerAllocation a = ContainerAllocation.builder().env(name, "v").build();
    assertThat(Validation.allocationProblems(a).isEmpty()).isEqualTo(ok);
  }

  @Test
  void dropsBadDevicesAndKeepsTheOthers() {
    List<Device> devices =
        List.of(
            Device.healthy("ok1"),
            Device.healthy(""),
            Device.healthy("x".repeat(64)),
            Device.healthy("x".repeat(63)),
            Device.healthy("ok1"),
            Device.builder("badnode").deviceNode(DeviceNode.rw("relative")).build(),
            Device.healthy("ok2"));
    Validation.DeviceCheck check = Validation.checkDevices(devices);
    assertThat(check.accepted())
        .extracting(Device::id)
        .containsExactly("ok1", "x".repeat(63), "ok2");
    assertThat(check.problems())
        .hasSize(4)
        .anyMatch(p -> p.contains("device ID is empty"))
        .anyMatch(p -> p.contains("is 64 characters; the kubelet allows at most 63"))
        .anyMatch(p -> p.contains("device ID \"ok1\" is repeated"))
        .anyMatch(p -> p.contains("device \"badnode\" dropped") && p.contains("not absolute"));
  }
}
