package io.github.deviceplugin4j.benchmarks.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Sizes;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The many-resources scenario at {@link Sizes#smoke()}: its own class, so the build's test JVMs run
 * it (mostly idle waits for the safety checks) beside the other process scenarios.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MultiResourceScenarioTest {

  private static final double MIB_MIN = 10;
  private static final double MIB_MAX = 2048;

  @TempDir Path root;

  @AfterEach
  void leavesNoProcessBehind() {
    assertThat(ProcessHandle.current().children().filter(ProcessHandle::isAlive).toList())
        .as("child processes of the harness after a scenario")
        .isEmpty();
  }

  @Test
  void resources_reportsRegistrationOfAllAndIdleRss() throws Exception {
    Report report = new Report();
    new MultiResourceScenario()
        .run(
            new BenchContext(
                Sizes.smoke(),
                root,
                Path.of(System.getProperty("bench.examplesDir", "../examples"))),
            report);

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

  private static List<String> column(Report.Table t, String column) {
    int c = t.columns().indexOf(column);
    assertThat(c).as("column " + column + " of " + t.title()).isNotNegative();
    return t.rows().stream().map(row -> row.get(c)).toList();
  }

  private static double number(String cell) {
    return Double.parseDouble(cell.replace(",", ""));
  }
}
