package io.github.deviceplugin4j.examples.fpga;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.testing.CliRun;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The plugin's command line, as {@code main} runs it, in this JVM. */
class FpgaPluginCliTest {

  static CliRun run(Map<String, String> env, String... args) {
    return CliRun.of(new FpgaPlugin(), FpgaPlugin.defaults(env), args);
  }

  @Test
  void help_printsEveryOptionAndTheExitCodes_andExitsZero() {
    CliRun run = run(Map.of(), "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("Usage: deviceplugin4j-example-fpga")
        .contains("--root=DIR", "--mode=af|region", "--poll-interval=DURATION", "--config=FILE")
        .contains("--metrics-address=[HOST]:PORT", "--version")
        .contains("Exit codes:", "FPGA_POLL_INTERVAL", "70   a fatal failure inside the SDK");
    assertThat(run.err()).isEmpty();
  }

  @Test
  void version_printsTheProjectVersion_andExitsZero() {
    CliRun run = run(Map.of(), "--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).matches("deviceplugin4j-example-fpga \\d+\\.\\d+\\.\\d+.*\\R");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withoutAStackTrace() {
    CliRun run = run(Map.of(), "--bogus");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--bogus'").contains("--help");
    assertThat(run.all()).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void aBadValueFromTheEnvironment_namesTheFlagAndTheVariable() {
    CliRun run = run(Map.of("FPGA_POLL_INTERVAL", "often"));

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("'--poll-interval'", "'often'", "FPGA_POLL_INTERVAL");
  }

  @Test
  void flagEqualsValue_andFlagSpaceValue_giveTheSameSettings() {
    FpgaConfig joined =
        FpgaConfig.parse(
            new String[] {"--root=/host", "--mode=region", "--poll-interval=2s"}, Map.of());
    FpgaConfig spaced =
        FpgaConfig.parse(
            new String[] {"--root", "/host", "--mode", "region", "--poll-interval", "2s"},
            Map.of());

    assertThat(spaced).isEqualTo(joined);
    assertThat(spaced.root()).isEqualTo(Path.of("/host"));
  }

  @Test
  void aMissingConfigFile_isARuntimeFailure_inOneLine(@TempDir Path dir) {
    Path missing = dir.resolve("fpga.properties");

    CliRun run = run(Map.of(), "--config", missing.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "deviceplugin4j-example-fpga: cannot read the config file "
                + missing
                + ": no such file"
                + System.lineSeparator());
  }

  @Test
  void aRootWithoutFpgas_isARuntimeFailure_namingTheDirectory(@TempDir Path root) {
    CliRun run = run(Map.of(), "--root=" + root);

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .contains("no FPGA port under " + root + "/sys/class/fpga_region")
        .doesNotContain("\tat ");
  }
}
