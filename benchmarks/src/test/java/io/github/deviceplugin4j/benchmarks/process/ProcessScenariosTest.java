package io.github.deviceplugin4j.benchmarks.process;

import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.MIB_MAX;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.MIB_MIN;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.column;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.number;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import io.github.deviceplugin4j.benchmarks.Sizes;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs each process scenario with {@link Sizes#smoke()} against the FPGA example's runnable jar and
 * checks that what it reports is sane: every row present, every number parses and lies in a
 * plausible range. No timing target is asserted. The example jars are found under the system
 * property {@code bench.examplesDir} (default {@code ../examples}, the reactor layout).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@ExtendWith(ScenarioTests.NoProcessLeftBehind.class)
class ProcessScenariosTest {

  /** Shared by the tests so the AppCDS archives are trained once. */
  @TempDir static Path root;

  @Test
  void coldStart_reportsEveryFlagSetWithRegistrationBeforeFirstAllocate() throws Exception {
    Report report = run(new ColdStartScenario());

    Report.Table t = report.table(ColdStartScenario.TITLE).orElseThrow();
    assertThat(column(t, "flag set"))
        .containsExactly(
            "default",
            "recommended",
            "recommended + AppCDS (trained with kubelet)",
            "recommended + AppCDS (image build)",
            "recommended",
            "recommended + AppCDS (image build)");
    assertThat(column(t, "registration"))
        .containsExactly(
            "legacy", "legacy", "legacy", "legacy", "plugin watcher", "plugin watcher");
    for (int r = 0; r < t.rows().size(); r++) {
      assertThat(t.cell(r, "runs")).isEqualTo("1");
      double registered = number(t.cell(r, "→ registered p50 (ms)"));
      double listed = number(t.cell(r, "→ first list p50 (ms)"));
      double allocated = number(t.cell(r, "→ first Allocate p50 (ms)"));
      assertThat(registered).isPositive().isLessThan(allocated);
      assertThat(listed).isPositive().isLessThanOrEqualTo(allocated);
      assertThat(allocated).isLessThan(60_000);
      assertThat(number(t.cell(r, "→ registered max (ms)"))).isEqualTo(registered);
      assertThat(number(t.cell(r, "CPU time at registered p50 (ms)"))).isPositive();
    }

    Report.Table archives = report.table(ColdStartScenario.ARCHIVES).orElseThrow();
    assertThat(archives.rows()).hasSize(2);
    for (int r = 0; r < 2; r++) {
      assertThat(archives.cell(r, "exit status")).isEqualTo("0");
      assertThat(number(archives.cell(r, "size (MiB)"))).isGreaterThan(1);
    }

    Report.Table classes = report.table(ColdStartScenario.CLASSES).orElseThrow();
    assertThat(column(classes, "flag set")).isEqualTo(column(t, "flag set"));
    assertThat(column(classes, "registration")).isEqualTo(column(t, "registration"));
    double plain = number(classes.cell(1, "from CDS archives"));
    for (int r = 0; r < classes.rows().size(); r++) {
      double total = number(classes.cell(r, "classes loaded"));
      assertThat(total).isGreaterThan(1000);
      assertThat(
              number(classes.cell(r, "from CDS archives"))
                  + number(classes.cell(r, "parsed at run time")))
          .isEqualTo(total);
    }
    // The application archives are used: more classes come from CDS than with the JDK's alone.
    for (int r : List.of(2, 3, 5)) {
      assertThat(number(classes.cell(r, "from CDS archives"))).isGreaterThan(plain);
    }

    assertThat(report.targets())
        .singleElement()
        .satisfies(x -> assertThat(x.name()).isEqualTo(ColdStartScenario.TARGET));
  }

  @Test
  void memory_reportsRssIdleAndAfterTheLoad() throws Exception {
    Report report = run(new MemoryScenario());

    Report.Table t = report.table(MemoryScenario.TITLE).orElseThrow();
    assertThat(column(t, "flag set"))
        .containsExactly("default", "recommended", "recommended + AppCDS (image build)");
    String after = "RSS after " + Fmt.count(Sizes.smoke().memoryAllocates()) + " Allocates (MiB)";
    for (int r = 0; r < t.rows().size(); r++) {
      double rssIdle = number(t.cell(r, "RSS idle (MiB)"));
      double hwmIdle = number(t.cell(r, "HWM idle (MiB)"));
      double rssAfter = number(t.cell(r, after));
      double hwmAfter = number(t.cell(r, "HWM after (MiB)"));
      for (double mib : List.of(rssIdle, hwmIdle, rssAfter, hwmAfter)) {
        assertThat(mib).isBetween(MIB_MIN, MIB_MAX);
      }
      assertThat(hwmIdle).isGreaterThanOrEqualTo(rssIdle);
      assertThat(hwmAfter).isGreaterThanOrEqualTo(rssAfter).isGreaterThanOrEqualTo(hwmIdle);
      assertThat(number(t.cell(r, "Allocate calls/s"))).isPositive();
      assertThat(number(t.cell(r, "threads"))).isPositive();
    }
    assertThat(report.targets()).hasSize(2);
  }

  @Test
  void missingExampleJar_failsNamingTheJarAndTheBuildCommand(@TempDir Path empty) {
    BenchContext ctx = new BenchContext(Sizes.smoke(), root, empty);
    for (Scenario s : List.of(new ColdStartScenario(), new MemoryScenario())) {
      assertThatThrownBy(() -> s.run(ctx, new Report()))
          .as(s.name())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("fpga/target/deviceplugin4j-example-fpga.jar is missing")
          .hasMessageContaining("./mvnw -B -q install -DskipTests");
    }
  }

  private static Report run(Scenario s) throws Exception {
    return ScenarioTests.run(s, root, BenchContext.Client.JVM);
  }
}
