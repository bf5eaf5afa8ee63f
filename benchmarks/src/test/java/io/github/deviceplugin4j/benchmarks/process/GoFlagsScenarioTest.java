package io.github.deviceplugin4j.benchmarks.process;

import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.assumeGo;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.number;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import io.github.deviceplugin4j.benchmarks.Sizes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Go-client flag-set and cold-Allocate scenarios at smoke sizes, in a class of their own so the
 * build's test JVMs run them beside the other Go-client scenarios. Skipped like those when the Go
 * toolchain is incomplete. No timing target is asserted.
 */
// The JDK 25 row's training (examples/aot/train.sh) takes a minute or more on a busy machine.
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@ExtendWith(ScenarioTests.NoProcessLeftBehind.class)
class GoFlagsScenarioTest {

  @TempDir static Path root;

  @Test
  void flagsWithGoClient_comparesTheCandidateFlagSetsWithTheGoStubAndTheColdAllocate()
      throws Exception {
    assumeGo();
    // The build runs the short version: an empty flag-sets file leaves the candidate baselines
    // (the Go stub, the image's flags and C2 lean); `--only=flags` without a file runs them all.
    Path sets = Files.writeString(root.resolve("no-extra-sets.txt"), "");
    System.setProperty(GoFlags.SETS_PROPERTY, sets.toString());
    Report report;
    try {
      report = run(new GoFlags());
    } finally {
      System.clearProperty(GoFlags.SETS_PROPERTY);
    }

    List<String> rows = GoFlags.CANDIDATE_BASELINES;
    Report.Table t = report.table(GoFlags.TITLE).orElseThrow();
    assertThat(t.rows()).extracting(r -> r.get(0)).containsExactlyElementsOf(rows);
    for (int r = 0; r < t.rows().size(); r++) {
      assertThat(number(t.cell(r, "c=1 p99"))).isGreaterThanOrEqualTo(number(t.cell(r, "c=1 p50")));
      assertThat(number(t.cell(r, "c=16 p50"))).isPositive();
      assertThat(number(t.cell(r, "c=16 ops/s"))).isPositive();
      assertThat(number(t.cell(r, "RSS idle (MiB)"))).isBetween(1.0, 2048.0);
      assertThat(number(t.cell(r, "RSS after load (MiB)"))).isBetween(1.0, 2048.0);
      assertThat(number(t.cell(r, "RSS settled (MiB)"))).isBetween(1.0, 2048.0);
      assertThat(number(t.cell(r, "restart max")))
          .isGreaterThanOrEqualTo(number(t.cell(r, "restart p50")))
          .isPositive();
    }
    Report.Table cold = report.table(GoFlags.COLD).orElseThrow();
    assertThat(cold.rows()).extracting(r -> r.get(0)).containsExactlyElementsOf(rows);
    for (int r = 0; r < cold.rows().size(); r++) {
      assertThat(cold.cell(r, "processes"))
          .isEqualTo(String.valueOf(Sizes.smoke().coldAllocates()));
      assertThat(number(cold.cell(r, "first Allocate p50"))).isPositive();
      assertThat(number(cold.cell(r, "after idle p50"))).isPositive();
    }
    assertThat(cold.cell(0, "first p50 / go-stub")).isEqualTo("1.00×");
  }

  @Test
  void coldWithGoClient_measuresTheGoStubTheImageFlagsAndTheJdk25Image() throws Exception {
    assumeGo();
    Report report = run(new GoCold());

    List<String> rows =
        Files.isExecutable(GoFlags.jdk25())
            ? List.of("go-stub", "image flags", GoFlags.AOT_ROW)
            : List.of("go-stub", "image flags");
    Report.Table cold = report.table(GoFlags.COLD).orElseThrow();
    assertThat(cold.rows()).extracting(r -> r.get(0)).containsExactlyElementsOf(rows);
    for (int r = 0; r < rows.size(); r++) {
      assertThat(number(cold.cell(r, "first Allocate p50"))).isPositive();
      // Start → registered: the harness's clock before the start, the Go kubelet's at the
      // Register; the list comes after the Register in every run.
      assertThat(number(cold.cell(r, "start → registered p50 (ms)"))).isPositive();
      assertThat(number(cold.cell(r, "start → listed p50 (ms)")))
          .isGreaterThanOrEqualTo(number(cold.cell(r, "start → registered p50 (ms)")));
    }
    assertThat(report.table(GoFlags.TITLE)).isEmpty();
    // The series after the call after idle: half its calls in the first column, the rest after.
    Report.Table series = report.table(GoFlags.COLD_SERIES).orElseThrow();
    assertThat(series.rows()).extracting(r -> r.get(0)).containsExactlyElementsOf(rows);
    int calls = Sizes.smoke().coldAllocates() * Sizes.smoke().coldSeries();
    for (int r = 0; r < rows.size(); r++) {
      assertThat(series.cell(r, "calls")).isEqualTo(String.valueOf(calls));
      assertThat(number(series.cell(r, "1-1 p90")))
          .isGreaterThanOrEqualTo(number(series.cell(r, "1-1 p50")));
      assertThat(number(series.cell(r, "rest p50"))).isPositive();
    }
    assertThat(series.cell(0, "rest p50 / go-stub")).isEqualTo("1.00×");
  }

  private static Report run(Scenario s) throws Exception {
    return ScenarioTests.run(s, root, BenchContext.Client.GO);
  }
}
