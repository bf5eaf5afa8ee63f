package io.github.deviceplugin4j.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Runs the in-process scenarios at their smoke sizes and checks that every table holds what it
 * claims: real measurements (positive, ordered percentiles), every plugin and mode, the targets.
 * Timing goals are not asserted here: they are measured by the benchmark command on a quiet
 * machine, not by the build.
 */
class BenchTest {

  static Report report;
  static String printed;

  @BeforeAll
  static void runQuick() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    report =
        Bench.run(
            Sizes.smoke(),
            Set.of("allocate", "observer", "admit", "health", "restart", "scale"),
            Path.of("..", "examples"),
            new PrintStream(out, true, StandardCharsets.UTF_8));
    printed = out.toString(StandardCharsets.UTF_8);
  }

  static double number(String cell) {
    return Double.parseDouble(cell.replace(",", "").replace("×", "").replace(" %", ""));
  }

  @Test
  void observerComparesMetricsOffAndOnAtEveryConcurrency() {
    Report.Table t = report.table(ObserverScenario.TITLE).orElseThrow();
    // per concurrency: off, noop, micrometer, ratio
    assertThat(t.rows()).hasSize(Sizes.smoke().concurrencies().size() * 4);
    assertThat(t.rows().stream().map(r -> r.get(1)).distinct())
        .containsExactly("off", "noop", "micrometer", "**micrometer / off**");
    for (int r = 0; r < t.rows().size(); r++) {
      assertThat(number(t.cell(r, "p50"))).isPositive();
    }
    assertThat(report.targets())
        .extracting(Report.Target::name)
        .contains("Metrics cost on Allocate p50, concurrency 1");
  }

  @Test
  void allocateMeasuresEveryPluginAtEveryConcurrencyWithOrderedPercentiles() {
    Report.Table t = report.table("Allocate round trip (1 device ID)").orElseThrow();
    // per concurrency: sdk, sdk-declarative, baseline, ratio
    assertThat(t.rows()).hasSize(Sizes.smoke().concurrencies().size() * 4);
    for (int r = 0; r < t.rows().size(); r++) {
      String plugin = t.cell(r, "plugin");
      if (plugin.contains("/")) {
        assertThat(number(t.cell(r, "p50"))).isPositive();
        continue;
      }
      assertThat(plugin).isIn("sdk", "sdk-declarative", "baseline");
      assertThat(number(t.cell(r, "calls"))).isEqualTo((double) Sizes.smoke().allocateCalls());
      double p50 = number(t.cell(r, "p50"));
      assertThat(p50).isPositive();
      assertThat(number(t.cell(r, "p99"))).isGreaterThanOrEqualTo(p50);
      assertThat(number(t.cell(r, "max"))).isGreaterThanOrEqualTo(number(t.cell(r, "p99.9")));
      assertThat(number(t.cell(r, "ops/s"))).isPositive();
    }
    assertThat(report.targets())
        .extracting(Report.Target::name)
        .contains(
            "SDK overhead on Allocate p50, concurrency 1",
            "SDK overhead on Allocate p99, concurrency 1",
            "Allocate p99, concurrency 1");
  }

  @Test
  void admitMeasuresPreferredAndTheWholeAdmitPathForBothPlugins() {
    Report.Table t = report.table("GetPreferredAllocation and the admit path").orElseThrow();
    assertThat(t.rows())
        .extracting(r -> r.get(0) + "/" + r.get(1))
        .containsExactly(
            "preferred/sdk",
            "preferred/baseline",
            "preferred/**sdk / baseline**",
            "admit/sdk",
            "admit/baseline",
            "admit/**sdk / baseline**");
    // The admit path holds three calls; it cannot be faster than the preferred call alone.
    assertThat(number(t.cell(3, "p50"))).isGreaterThan(0);
    assertThat(number(t.cell(3, "max"))).isGreaterThanOrEqualTo(number(t.cell(3, "p50")));
  }

  @Test
  void healthRestartAndScaleReportEachCaseAndTheirTargets() {
    Report.Table health = report.table("Health change → kubelet").orElseThrow();
    assertThat(health.rows()).extracting(r -> r.get(1)).containsExactly("paced", "back to back");
    assertThat(number(health.cell(0, "flips"))).isEqualTo((double) Sizes.smoke().flips());

    Report.Table restart = report.table("Kubelet restart → registered again").orElseThrow();
    assertThat(restart.rows())
        .extracting(r -> r.get(0))
        .containsExactly("legacy Register", "plugin watcher");
    for (int r = 0; r < 2; r++) {
      assertThat(number(restart.cell(r, "registered p50"))).isPositive();
    }

    Report.Table scale = report.table("ListAndWatch with large device lists").orElseThrow();
    List<Integer> counts = Sizes.smoke().deviceCounts();
    assertThat(scale.rows()).hasSize(counts.size());
    double previousBytes = 0;
    for (int r = 0; r < counts.size(); r++) {
      assertThat(number(scale.cell(r, "devices"))).isEqualTo((double) counts.get(r));
      double bytes = number(scale.cell(r, "bytes on the wire"));
      assertThat(bytes).isGreaterThan(previousBytes).isGreaterThan(counts.get(r) * 10.0);
      previousBytes = bytes;
    }
    assertThat(report.targets())
        .extracting(Report.Target::name)
        .contains(
            "Health change → kubelet p99 (paced)",
            "Restart → registered p99, legacy Register",
            "Restart → registered p99, plugin watcher");
  }

  @Test
  void printsMarkdownTablesWithTheMachineHeaderAndTheTargets() {
    assertThat(printed).startsWith("Measured ");
    assertThat(printed.toLowerCase(Locale.ROOT)).contains("cores", "jvm flags");
    assertThat(printed)
        .contains("### Allocate round trip (1 device ID)", "| concurrency | plugin |");
    assertThat(printed).contains("### Targets", "| target | goal | measured | met |");
    assertThat(Bench.render(report)).contains("### Kubelet restart → registered again");
  }

  @Test
  void anUnknownScenarioNameIsRefusedWithTheKnownNames() {
    assertThatThrownBy(
            () ->
                Bench.run(
                    Sizes.smoke(),
                    Set.of("alocate"),
                    Path.of("..", "examples"),
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
        .hasMessageContaining("no scenario named alocate")
        .hasMessageContaining("allocate, admit");
  }
}
