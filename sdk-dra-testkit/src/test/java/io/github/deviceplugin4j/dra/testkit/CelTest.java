package io.github.deviceplugin4j.dra.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CEL subset the test cluster's allocator evaluates, on one device's variables. */
class CelTest {
  private static final Map<String, Object> DEVICE =
      Map.of(
          "driver",
          "gpu.example.com",
          "attributes",
          Map.of("gpu.example.com", Map.of("model", "h100", "cores", 132L, "mig", true)),
          "capacity",
          Map.of("gpu.example.com", Map.of("memory", new BigDecimal("85899345920"))),
          "allowMultipleAllocations",
          false);

  @Test
  void comparesAttributesOfEachTypeAndCombinesThem() {
    assertThat(Cel.matches("device.driver == \"gpu.example.com\"", DEVICE)).isTrue();
    assertThat(
            Cel.matches(
                "device.attributes[\"gpu.example.com\"].model == 'h100' &&"
                    + " device.attributes[\"gpu.example.com\"].cores >= 100",
                DEVICE))
        .isTrue();
    assertThat(Cel.matches("!device.attributes[\"gpu.example.com\"].mig", DEVICE)).isFalse();
    assertThat(Cel.matches("(1 > 2) || \"x\" != \"y\"", DEVICE)).isTrue();
    assertThat(Cel.matches("\"serial\" in device.attributes[\"gpu.example.com\"]", DEVICE))
        .isFalse();
    assertThat(
            Cel.matches("device.attributes[\"gpu.example.com\"].model.startsWith(\"h\")", DEVICE))
        .isTrue();
  }

  @Test
  void comparesCapacitiesAsQuantities() {
    assertThat(
            Cel.matches(
                "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"80Gi\")) >= 0",
                DEVICE))
        .isTrue();
    assertThat(
            Cel.matches(
                "device.capacity[\"gpu.example.com\"].memory.isGreaterThan(quantity(\"81Gi\"))",
                DEVICE))
        .isFalse();
  }

  @Test
  void aMissingKeyATypeMismatchAndUnsupportedSyntaxAreErrorsThatSayWhat() {
    assertThatThrownBy(() -> Cel.matches("device.attributes[\"other.com\"].x == 1", DEVICE))
        .hasMessageContaining("no such key: other.com");
    assertThatThrownBy(
            () -> Cel.matches("device.attributes[\"gpu.example.com\"].cores == \"132\"", DEVICE))
        .hasMessageContaining("no such overload: int == string");
    assertThatThrownBy(() -> Cel.matches("semver(\"1.0.0\") == semver(\"1.0.0\")", DEVICE))
        .hasMessageContaining("'semver' is not supported");
    assertThatThrownBy(() -> Cel.matches("device.driver", DEVICE))
        .hasMessageContaining("must evaluate to bool");
  }
}
