package io.github.deviceplugin4j.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.PluginCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The benchmark jar's command line, as {@code main} runs it, in this JVM. */
class BenchCommandTest {

  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        PluginCli.execute(
            new BenchCommand(),
            EnvironmentDefaults.none(),
            new PrintWriter(out, true),
            new PrintWriter(err, true),
            args);
    return new Run(code, out.toString(), err.toString());
  }

  static BenchCommand parse(String... args) {
    return PluginCli.parse(new BenchCommand(), EnvironmentDefaults.none(), args);
  }

  @Test
  void help_printsEveryFlagTheDocsQuote_theScenarios_andTheExitCodes() {
    Run run = run("--help");

    assertThat(run.code()).isZero();
    assertThat(run.out())
        .contains("Usage: deviceplugin4j-benchmarks")
        .contains("--quick", "--only=SCENARIO[,SCENARIO...]", "--out=FILE", "--client=jvm|go")
        .contains("--examples=DIR", "allocate", "coldstart", "Exit codes:");
  }

  @Test
  void version_printsTheProjectVersion_andExitsZero() {
    Run run = run("--version");

    assertThat(run.code()).isZero();
    assertThat(run.out()).startsWith("deviceplugin4j-benchmarks ");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withoutAStackTrace() {
    Run run = run("--bogus");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--bogus'");
    assertThat(run.out() + run.err()).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void anUnknownScenario_isAUsageErrorListingTheScenarios() {
    Run run = run("--only=allocat");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).contains("no scenario named 'allocat'", "allocate, admit");
  }

  @Test
  void theDocumentedFlags_readTheSameWithEqualsOrSpace() {
    BenchCommand joined = parse("--client=go", "--only=allocate,restart", "--quick");
    BenchCommand spaced = parse("--client", "GO", "--only", "allocate,restart", "--quick");

    assertThat(spaced.client).isEqualTo(joined.client).isEqualTo(BenchContext.Client.GO);
    assertThat(spaced.only).isEqualTo(joined.only).containsExactly("allocate", "restart");
    assertThat(spaced.quick).isTrue();
    assertThat(parse().client).isEqualTo(BenchContext.Client.JVM);
  }

  @Test
  void aMissingExampleJar_isAFailureInOneLine(@TempDir Path examples) {
    Run run = run("--quick", "--only=coldstart", "--examples=" + examples);

    assertThat(run.code()).isEqualTo(1);
    assertThat(run.err())
        .startsWith("deviceplugin4j-benchmarks: ")
        .contains("deviceplugin4j-example-fpga.jar is missing");
    assertThat(run.err().lines()).hasSize(1);
  }
}
