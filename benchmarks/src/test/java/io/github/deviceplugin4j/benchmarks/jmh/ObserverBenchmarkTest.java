package io.github.deviceplugin4j.benchmarks.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ObserverBenchmarkTest {

  @Test
  void everyInvocationIsRecordedInTheRegistry() {
    ObserverBenchmark b = new ObserverBenchmark();
    b.setUp();

    for (int i = 0; i < 10; i++) {
      b.allocateEvent();
    }

    assertThat(
            b.registry
                .get("deviceplugin4j.rpc")
                .tag("method", "Allocate")
                .tag("code", "OK")
                .timer()
                .count())
        .isEqualTo(11); // the set-up event and ten more
  }
}
