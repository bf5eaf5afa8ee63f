package io.github.deviceplugin4j.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StatsTest {

  @Test
  void nearestRankPercentilesOfUnsortedSamples() {
    long[] samples = new long[1000];
    for (int i = 0; i < samples.length; i++) {
      samples[i] = (i * 7919L) % 1000 + 1; // 1..1000, shuffled
    }
    Stats s = Stats.of(samples);
    assertThat(s.count()).isEqualTo(1000);
    assertThat(s.percentile(50)).isEqualTo(500);
    assertThat(s.percentile(99)).isEqualTo(990);
    assertThat(s.percentile(99.9)).isEqualTo(999);
    assertThat(s.percentile(100)).isEqualTo(1000);
    assertThat(s.max()).isEqualTo(1000);
    assertThat(s.min()).isEqualTo(1);
  }

  @Test
  void onlyTheValidPrefixCountsAndTheInputIsNotReordered() {
    long[] samples = {30, 10, 20, 99, 99};
    Stats s = Stats.of(samples, 3);
    assertThat(s.max()).isEqualTo(30);
    assertThat(s.percentile(50)).isEqualTo(20);
    assertThat(samples).containsExactly(30, 10, 20, 99, 99);
  }

  @Test
  void noSampleOrBadPercentileIsAClearError() {
    assertThatThrownBy(() -> Stats.of(new long[0])).hasMessageContaining("no samples");
    assertThatThrownBy(() -> Stats.of(new long[] {1}).percentile(0))
        .hasMessageContaining("(0, 100]");
  }
}
