package io.github.deviceplugin4j.examples.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A problem found in sysfs is logged once when it appears and once when it is gone. */
class ProblemLogTest {

  @Test
  void logsEachProblemOnceWhenItAppearsAndWhenItIsGone() {
    CapturingLogger logger = new CapturingLogger();
    ProblemLog log = new ProblemLog(logger, "example.com/x");

    log.report(List.of("a is garbage"));
    log.report(List.of("a is garbage"));
    log.report(List.of("a is garbage", "b is missing"));
    log.report(List.of());

    assertThat(logger.lines)
        .containsExactly(
            "WARN example.com/x: a is garbage",
            "WARN example.com/x: b is missing",
            "INFO example.com/x: resolved: a is garbage",
            "INFO example.com/x: resolved: b is missing");
    assertThat(log.current()).isEmpty();
  }
}
