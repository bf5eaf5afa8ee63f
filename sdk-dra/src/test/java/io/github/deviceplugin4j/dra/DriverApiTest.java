package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The records a driver builds refuse what the kubelet could not use, saying what to do. */
class DriverApiTest {

  @Test
  void aCdiDeviceIdThatIsNotFullyQualifiedIsRefused() {
    assertThatThrownBy(() -> PreparedDevice.of("pool", "dev", "gpu0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'gpu0'")
        .hasMessageContaining("vendor/class=name");
  }

  @Test
  void aDeviceWithoutPoolOrNameIsRefused() {
    assertThatThrownBy(() -> PreparedDevice.of("", "dev"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("poolName");
    assertThatThrownBy(() -> PreparedDevice.of("pool", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deviceName");
  }

  @Test
  void aFailureNeedsAReason() {
    assertThatThrownBy(() -> PrepareResult.failed(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("say why");
    assertThat(PrepareResult.failed("busy").error()).contains("busy");
    assertThat(PrepareResult.prepared(List.of()).isPrepared()).isTrue();
  }

  @Test
  void aNegativeHealthTimeoutIsRefusedWithTheDefaultToUse() {
    assertThatThrownBy(
            () ->
                new DraDeviceHealth(
                    "pool",
                    "dev",
                    DraHealthStatus.HEALTHY,
                    "",
                    Instant.EPOCH,
                    Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Duration.ZERO");
  }
}
