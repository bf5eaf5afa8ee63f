package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.internal.ResourceNames;
import io.github.deviceplugin4j.testkit.internal.ResponseChecks;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ResourceNamesTest {

  @ParameterizedTest
  @CsvSource({
    "no-domain, false",
    "kubernetes.io/foo, false",
    "sub.kubernetes.io/foo, false",
    "requests.example.com/x, false",
    "Example.com/foo, false",
    "example.com/-bad, false",
    "example.com/bad-, false",
    "example.com/a/b, false",
    "example.com/, false",
    "/foo, false",
    "example..com/foo, false",
    "example.com/ok_name.1, true",
    "example.com/OK, true",
    "intel.com/fpga-arria10, true",
    "nvidia.com/gpu, true"
  })
  void followsTheKubeletsExtendedResourceNameRules(String name, boolean valid) {
    assertThat(ResourceNames.isExtendedResourceName(name)).isEqualTo(valid);
  }

  @Test
  void limitsTheNamePartTo63Characters() {
    assertThat(ResourceNames.isExtendedResourceName("example.com/" + "a".repeat(63))).isTrue();
    assertThat(ResourceNames.isExtendedResourceName("example.com/" + "a".repeat(64))).isFalse();
  }

  @Test
  void limitsTheDomainSoThatRequestsPrefixFitsA253CharacterSubdomain() {
    String label = "a".repeat(60);
    String domain = String.join(".", label, label, label, "b".repeat(59)); // 242 characters
    assertThat(domain).hasSize(242);
    assertThat(ResourceNames.isExtendedResourceName(domain + ".c/x")).isTrue(); // 244
    assertThat(ResourceNames.isExtendedResourceName(domain + ".cc/x")).isFalse(); // 245 + 9 > 253
  }

  @Test
  void formatsLikeGo() {
    assertThat(ResourceNames.unsupportedVersionError("v2", List.of("v1beta1", "v1beta2")))
        .isEqualTo(
            "requested API version \"v2\" is not supported by kubelet. Supported version is"
                + " [\"v1beta1\" \"v1beta2\"]");
    assertThat(ResourceNames.goQuote("a\"b\\c\n")).isEqualTo("\"a\\\"b\\\\c\\n\"");
  }

  @Test
  void checksCdiNamesAndPermissions() {
    assertThat(ResponseChecks.isCdiName("vendor.com/class=name")).isTrue();
    assertThat(ResponseChecks.isCdiName("nvidia.com/gpu=GPU-1234:0")).isTrue();
    assertThat(ResponseChecks.isCdiName("vendor.com/class")).isFalse();
    assertThat(ResponseChecks.isCdiName("/class=name")).isFalse();
    assertThat(ResponseChecks.isCdiName("vendor.com/class=")).isFalse();
    assertThat(ResponseChecks.isCdiName("vendor.com/cl.ass=x")).isFalse();
    assertThat(ResponseChecks.validPermissions("rwm")).isTrue();
    assertThat(ResponseChecks.validPermissions("mr")).isTrue();
    assertThat(ResponseChecks.validPermissions("")).isFalse();
    assertThat(ResponseChecks.validPermissions("rr")).isFalse();
    assertThat(ResponseChecks.validPermissions("rwx")).isFalse();
  }

  @Test
  void checksDeviceLists() {
    assertThat(
            ResponseChecks.deviceListProblems(
                List.of(
                    new DeviceState("a", "Healthy", List.of()),
                    new DeviceState("a", "Unhealthy", List.of()),
                    new DeviceState("", "Healthy", List.of()),
                    new DeviceState("b", "OK", List.of()))))
        .containsExactly(
            "device ID \"a\" appears more than once",
            "a device has an empty ID",
            "device \"b\" has health \"OK\"; the kubelet knows only \"Healthy\" and \"Unhealthy\"");
  }
}
