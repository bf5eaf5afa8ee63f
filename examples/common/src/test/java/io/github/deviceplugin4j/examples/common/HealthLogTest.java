package io.github.deviceplugin4j.examples.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A device's health is logged when it changes, not at every scan. */
class HealthLogTest {

  @Test
  void logsATurnToUnhealthyOnceWithItsReasonAndTheRecoveryOnce() {
    CapturingLogger logger = new CapturingLogger();
    HealthLog health = new HealthLog(logger, "example.com/x");

    health.update("d0", Optional.empty());
    health.update("d1", Optional.of("port 1 is DOWN"));
    health.update("d1", Optional.of("port 1 is DOWN"));
    health.update("d0", Optional.of("errors read 0x4"));
    health.update("d0", Optional.empty());
    health.update("d0", Optional.empty());

    assertThat(logger.lines)
        .containsExactly(
            "WARN example.com/x: d1 is unhealthy: port 1 is DOWN",
            "WARN example.com/x: d0 is unhealthy: errors read 0x4",
            "INFO example.com/x: d0 is healthy again");
  }

  @Test
  void remembersDevicesUntilForgottenAndSeesThemAnewAfterwards() {
    CapturingLogger logger = new CapturingLogger();
    HealthLog health = new HealthLog(logger, "example.com/x");
    health.update("d0", Optional.of("gone bad"));

    assertThat(health.knows("d0")).isTrue();
    assertThat(health.knows("d1")).isFalse();
    assertThat(health.forget("d0")).isTrue();
    assertThat(health.forget("d0")).isFalse();
    assertThat(health.knows("d0")).isFalse();

    health.update("d0", Optional.of("gone bad"));
    assertThat(logger.lines)
        .containsExactly(
            "WARN example.com/x: d0 is unhealthy: gone bad",
            "WARN example.com/x: d0 is unhealthy: gone bad");
  }
}
