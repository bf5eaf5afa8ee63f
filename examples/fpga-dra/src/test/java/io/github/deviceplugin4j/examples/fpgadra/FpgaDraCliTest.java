package io.github.deviceplugin4j.examples.fpgadra;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.testing.CliRun;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The DRA driver's command line, as {@code main} runs it, in this JVM. */
class FpgaDraCliTest {

  static CliRun run(Map<String, String> env, String... args) {
    return CliRun.of(new FpgaDraCommand(), FpgaDraCommand.defaults(env), args);
  }

  @Test
  void help_printsEveryOptionAndTheExitCodes_andExitsZero() {
    CliRun run = run(Map.of(), "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("Usage: deviceplugin4j-example-fpga-dra")
        .contains("--root=DIR", "--driver-name=NAME", "--node-name=NODE", "--plugin-dir=DIR")
        .contains("--registry-dir=DIR", "--cdi-dir=DIR", "--pod-uid=UID", "--config=FILE")
        .contains("Exit codes:", "FPGA_POLL_INTERVAL");
  }

  @Test
  void version_printsTheProjectVersion_andExitsZero() {
    CliRun run = run(Map.of(), "--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).startsWith("deviceplugin4j-example-fpga-dra ");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withoutAStackTrace() {
    CliRun run = run(Map.of("NODE_NAME", "n1"), "--bogus");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--bogus'");
    assertThat(run.all()).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void aMissingNodeName_isAUsageErrorSayingWhereToSetIt() {
    CliRun run = run(Map.of());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("NODE_NAME", "--node-name");
  }

  @Test
  void flagEqualsValue_andFlagSpaceValue_giveTheSameSettings() {
    FpgaDraConfig joined =
        FpgaDraConfig.parse(
            new String[] {"--node-name=n1", "--root=/host", "--pod-uid=1234"}, Map.of());
    FpgaDraConfig spaced =
        FpgaDraConfig.parse(
            new String[] {"--node-name", "n1", "--root", "/host", "--pod-uid", "1234"}, Map.of());

    assertThat(spaced).isEqualTo(joined);
    assertThat(spaced.podUid()).contains("1234");
  }

  @Test
  void aMissingConfigFile_isARuntimeFailure_inOneLine(@TempDir Path dir) {
    Path missing = dir.resolve("fpga.properties");

    CliRun run = run(Map.of("NODE_NAME", "n1"), "--config=" + missing);

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "deviceplugin4j-example-fpga-dra: cannot read the config file "
                + missing
                + ": no such file"
                + System.lineSeparator());
  }
}
