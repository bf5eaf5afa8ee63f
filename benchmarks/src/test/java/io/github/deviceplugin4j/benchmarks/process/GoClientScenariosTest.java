package io.github.deviceplugin4j.benchmarks.process;

import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.assumeGo;
import static io.github.deviceplugin4j.benchmarks.process.ScenarioTests.number;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.github.deviceplugin4j.benchmarks.AllocateScenario;
import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.ObserverScenario;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.RestartScenario;
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
 * The Go-client variants of the allocate and restart scenarios at smoke sizes: every plugin and
 * step is reported with real measurements. They need the Go toolchain benchmarks/go/build.sh uses
 * (go, protoc, protoc-gen-go, protoc-gen-go-grpc, Debian's Go gRPC and protobuf packages) and are
 * skipped with what is missing and the install command otherwise; then the scenarios themselves
 * must skip with the install command, which the last tests check. No timing target is asserted.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ScenarioTests.NoProcessLeftBehind.class)
class GoClientScenariosTest {

  @TempDir static Path root;

  @Test
  void allocateWithGoClient_measuresEveryPluginProcessAndTheRatiosToGo() throws Exception {
    assumeGo();
    Report report = run(new AllocateScenario());

    Report.Table t = report.table(GoAllocate.TITLE).orElseThrow();
    List<String> plugins =
        List.of(
            "go-stub",
            "sdk-declarative",
            "fpga-example",
            "baseline",
            "**sdk-declarative / go-stub**",
            "**fpga-example / go-stub**",
            "**baseline / go-stub**");
    assertThat(t.rows()).hasSize(Sizes.smoke().concurrencies().size() * plugins.size());
    for (int r = 0; r < t.rows().size(); r++) {
      assertThat(t.cell(r, "plugin")).isEqualTo(plugins.get(r % plugins.size()));
      assertThat(t.cell(r, "concurrency"))
          .isEqualTo(String.valueOf(Sizes.smoke().concurrencies().get(r / plugins.size())));
      double p50 = number(t.cell(r, "p50"));
      assertThat(p50).isPositive();
      assertThat(number(t.cell(r, "ops/s"))).isPositive();
      if (r % plugins.size() < 4) {
        assertThat(number(t.cell(r, "calls"))).isEqualTo(Sizes.smoke().allocateCalls());
        assertThat(number(t.cell(r, "p99"))).isGreaterThanOrEqualTo(p50);
        assertThat(number(t.cell(r, "max"))).isGreaterThanOrEqualTo(number(t.cell(r, "p99.9")));
      }
    }
    Report.Table admit = report.table(GoAllocate.ADMIT).orElseThrow();
    assertThat(admit.rows()).hasSize(plugins.size());
    assertThat(number(admit.cell(0, "p50"))).isPositive();
    // The Go stub offers preferred allocation and pre-start; the declarative plugin neither.
    assertThat(admit.cell(0, "RPCs")).isEqualTo("3");
    assertThat(admit.cell(1, "RPCs")).isEqualTo("1");
    assertThat(report.targets())
        .extracting(Report.Target::name)
        .contains("Go client: FPGA example (image flags) Allocate p50, concurrency 1");
  }

  @Test
  void observerWithGoClient_measuresMetricsOffAndOnProcesses() throws Exception {
    assumeGo();
    Report report = run(new ObserverScenario());

    Report.Table t = report.table(GoObserver.TITLE).orElseThrow();
    List<String> plugins =
        List.of(
            "off",
            "micrometer",
            "off-again",
            "**micrometer / off**",
            "**off-again / off** (noise)");
    assertThat(t.rows()).hasSize(Sizes.smoke().concurrencies().size() * plugins.size());
    for (int r = 0; r < t.rows().size(); r++) {
      assertThat(t.cell(r, "plugin")).isEqualTo(plugins.get(r % plugins.size()));
      assertThat(number(t.cell(r, "p50"))).isPositive();
      if (r % plugins.size() < 3) {
        assertThat(number(t.cell(r, "calls"))).isEqualTo(Sizes.smoke().allocateCalls());
      }
    }
    assertThat(report.targets())
        .extracting(Report.Target::name)
        .contains(
            "Go client: metrics cost on Allocate p50 (against the mean of off and off-again),"
                + " concurrency 1");
  }

  @Test
  void restartWithGoKubelet_timesEveryStepForTheFpgaExampleAndTheGoStub() throws Exception {
    assumeGo();
    Report report = run(new RestartScenario());

    Report.Table t = report.table(GoRestart.TITLE).orElseThrow();
    assertThat(t.rows()).extracting(r -> r.get(0)).containsExactly("fpga-example", "go-stub");
    for (int r = 0; r < 2; r++) {
      assertThat(t.cell(r, "restarts")).isEqualTo(String.valueOf(Sizes.smoke().restarts()));
      double register = number(t.cell(r, "→ Register p50"));
      assertThat(register).isPositive();
      assertThat(number(t.cell(r, "→ options p50"))).isPositive();
      assertThat(number(t.cell(r, "→ first list p50"))).isPositive();
      assertThat(number(t.cell(r, "served → listed p50"))).isGreaterThan(register);
      assertThat(number(t.cell(r, "max"))).isGreaterThanOrEqualTo(register);
    }
    // Every restart in order: the first alone, the other warm-up ones, then one column per
    // measured restart at smoke sizes.
    Report.Table inOrder = report.table(GoRestart.IN_ORDER_TITLE).orElseThrow();
    assertThat(inOrder.rows()).extracting(r -> r.get(0)).containsExactly("fpga-example", "go-stub");
    int last = GoRestart.WARM_UP + Sizes.smoke().restarts();
    assertThat(inOrder.rows().get(0)).hasSize(1 + 2 + Sizes.smoke().restarts());
    assertThat(number(inOrder.cell(0, "1"))).isPositive();
    assertThat(number(inOrder.cell(0, "2-" + GoRestart.WARM_UP))).isPositive();
    assertThat(number(inOrder.cell(1, String.valueOf(last)))).isPositive();
  }

  @Test
  void flagsWithTheJvmClient_isSkippedWithTheReason() throws Exception {
    Report report = new Report();
    new GoFlags()
        .run(
            new BenchContext(
                Sizes.smoke(),
                root,
                Path.of(System.getProperty("bench.examplesDir", "../examples"))),
            report);
    assertThat(report.table("Skipped: flags").orElseThrow().cell(0, "reason"))
        .contains("--client=go");
  }

  @Test
  void withoutTheGoToolchain_theGoScenariosSkipNamingTheInstallCommand() throws Exception {
    assumeFalse(
        GoPrograms.missing().isEmpty(), "the Go toolchain is complete: the scenarios run instead");
    for (Scenario s : List.of(new AllocateScenario(), new RestartScenario(), new GoFlags())) {
      Report report = run(s);
      String title = "Skipped: " + s.name() + (s instanceof GoFlags ? "" : " --client=go");
      Report.Table t = report.table(title).orElseThrow();
      assertThat(t.cell(0, "reason"))
          .contains("the Go toolchain is incomplete (missing ")
          .contains("apt-get install -y golang-go golang-google-grpc-dev");
      assertThat(report.targets()).isEmpty();
    }
  }

  @Test
  void goWithoutTheGrpcGeneratorIsAnIncompleteToolchain(@TempDir Path dir) throws Exception {
    Path bin = Files.createDirectory(dir.resolve("bin"));
    Path gopath = Files.createDirectory(dir.resolve("gocode"));
    String path = dir + ":" + bin;
    assertThat(GoPrograms.missing(path, gopath))
        .startsWith("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")
        .contains("google.golang.org/grpc (golang-google-grpc-dev)");
    Path go = Files.createFile(bin.resolve("go"));
    assertThat(GoPrograms.missing(path, gopath)).as("not executable").contains("go");
    assertThat(go.toFile().setExecutable(true)).isTrue();
    for (String tool : List.of("protoc", "protoc-gen-go")) {
      assertThat(Files.createFile(bin.resolve(tool)).toFile().setExecutable(true)).isTrue();
    }
    for (String pkg : GoPrograms.PACKAGES.keySet()) {
      Files.createDirectories(gopath.resolve("src").resolve(pkg));
    }
    List<String> missing = GoPrograms.missing(path, gopath);
    assertThat(missing).containsExactly("protoc-gen-go-grpc");
    assertThat(GoPrograms.missingReason(missing))
        .contains("missing protoc-gen-go-grpc")
        .contains(GoPrograms.INSTALL);
    assertThat(Files.createFile(bin.resolve("protoc-gen-go-grpc")).toFile().setExecutable(true))
        .isTrue();
    assertThat(GoPrograms.missing(path, gopath)).isEmpty();
    assertThat(GoPrograms.missing(null, gopath)).contains("go");
  }

  @Test
  void goLinesAreParsedIntoFieldsOfTheRequestedKindOnly() {
    List<GoLines.Line> lines =
        GoLines.parse(
            "serving /x/kubelet.sock\nrestart i=0 register=10 options=25 list=40\n"
                + "restart i=1 register=11 options=26 list=41\ndone\n",
            "restart");
    assertThat(lines).hasSize(2);
    assertThat(lines.get(1).nanos("list")).isEqualTo(41);
    assertThat(lines.get(0).get("i")).isEqualTo("0");
  }

  private static Report run(Scenario s) throws Exception {
    return ScenarioTests.run(s, root, BenchContext.Client.GO);
  }
}
