package io.github.deviceplugin4j.benchmarks.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import io.github.deviceplugin4j.benchmarks.Sizes;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the process scenario tests share: running a scenario at {@link Sizes#smoke()}, the Go
 * toolchain assumption, the check that no plugin process outlives its scenario, and reading the
 * report's cells.
 */
final class ScenarioTests {

  /** Plausible bounds of any memory figure the scenarios report, MiB. */
  static final double MIB_MIN = 10;

  static final double MIB_MAX = 2048;

  private ScenarioTests() {}

  /** Fails a test that leaves a child process of the harness alive. */
  static final class NoProcessLeftBehind implements AfterEachCallback {
    @Override
    public void afterEach(ExtensionContext context) {
      assertThat(ProcessHandle.current().children().filter(ProcessHandle::isAlive).toList())
          .as("child processes of the harness after a scenario")
          .isEmpty();
    }
  }

  /** Skips the test, naming what is missing, unless the whole Go toolchain is installed. */
  static void assumeGo() {
    assumeTrue(GoPrograms.missing().isEmpty(), GoPrograms::missingReason);
  }

  /** A smoke-size run in {@code root}, the examples found as in the reactor layout. */
  static BenchContext context(Path root, BenchContext.Client client) {
    return new BenchContext(
        Sizes.smoke(),
        root,
        Path.of(System.getProperty("bench.examplesDir", "../examples")).toAbsolutePath(),
        client);
  }

  /** Runs the scenario in a smoke-size run and answers its report. */
  static Report run(Scenario s, Path root, BenchContext.Client client) throws Exception {
    Report report = new Report();
    s.run(context(root, client), report);
    return report;
  }

  /** A column's cells, top to bottom; fails naming the column when the table lacks it. */
  static List<String> column(Report.Table t, String column) {
    int c = t.columns().indexOf(column);
    assertThat(c).as("column " + column + " of " + t.title()).isNotNegative();
    return t.rows().stream().map(row -> row.get(c)).toList();
  }

  /** A number as the report formats it (thousands separators and a ratio's × allowed). */
  static double number(String cell) {
    return Double.parseDouble(cell.replace(",", "").replace("×", ""));
  }
}
