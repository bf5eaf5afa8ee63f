package io.github.deviceplugin4j.benchmarks.process;

import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.MIB_MAX;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.MIB_MIN;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.column;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.number;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.run;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Sizes;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The many-resources scenario at {@link Sizes#smoke()}: its own class, so the build's test JVMs run
 * it (mostly idle waits for the safety checks) beside the other process scenarios.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@ExtendWith(ScenarioTests.NoProcessLeftBehind.class)
class MultiResourceScenarioTest {

  @TempDir Path root;

  @Test
  void resources_reportsRegistrationOfAllAndIdleRss() throws Exception {
    Report report = run(new MultiResourceScenario(), root, BenchContext.Client.JVM);

    Report.Table t = report.table(MultiResourceScenario.TITLE).orElseThrow();
    assertThat(column(t, "resources"))
        .containsExactly("1", Integer.toString(Sizes.smoke().resources()));
    for (int r = 0; r < t.rows().size(); r++) {
      double first = number(t.cell(r, "→ first registered (ms)"));
      assertThat(first).isPositive();
      assertThat(number(t.cell(r, "→ all registered (ms)"))).isGreaterThanOrEqualTo(first);
      assertThat(number(t.cell(r, "RSS idle (MiB)"))).isBetween(MIB_MIN, MIB_MAX);
      assertThat(number(t.cell(r, "RSS at +12 s (MiB)"))).isBetween(MIB_MIN, MIB_MAX);
      // The peak against the RSS of the same moment: VmHWM is not a maximum of every earlier
      // VmRSS reading (the kernel folds the current RSS into its mark at some events only), so
      // an earlier reading can be above a later mark (seen: 61.7 MiB idle, 61.5 MiB at +12 s).
      assertThat(number(t.cell(r, "HWM at +12 s (MiB)")))
          .isBetween(MIB_MIN, MIB_MAX)
          .isGreaterThanOrEqualTo(number(t.cell(r, "RSS at +12 s (MiB)")));
      assertThat(number(t.cell(r, "threads idle"))).isGreaterThan(1);
      assertThat(number(t.cell(r, "threads at +12 s"))).isGreaterThan(1);
    }
  }
}
