package io.github.deviceplugin4j.examples.infiniband;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.testing.CliRun;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The plugin's command line, as {@code main} runs it, in this JVM. */
class InfinibandPluginCliTest {

  static CliRun run(String... args) {
    return CliRun.of(new InfinibandPlugin(), InfinibandPlugin.defaults(Map.of()), args);
  }

  @Test
  void help_printsEveryOptionAndTheExitCodes_andExitsZero() {
    CliRun run = run("--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("Usage: deviceplugin4j-example-infiniband")
        .contains("--mode=exclusive|shared", "--slots=N", "--hcas=NAME[,NAME...]")
        .contains("--metrics-address=[HOST]:PORT", "--config=FILE")
        .contains("Exit codes:", "IB_POLL_INTERVAL");
  }

  @Test
  void version_printsTheProjectVersion_andExitsZero() {
    CliRun run = run("--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).startsWith("deviceplugin4j-example-infiniband ");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withoutAStackTrace() {
    CliRun run = run("--bogus");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--bogus'").contains("--help");
    assertThat(run.all()).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void slotsInExclusiveMode_isAUsageError_namingTheSetting() {
    CliRun run = run("--slots=4");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("slots only applies to shared mode");
  }

  @Test
  void flagEqualsValue_andFlagSpaceValue_giveTheSameSettings() {
    InfinibandConfig joined =
        InfinibandConfig.parse(
            new String[] {"--mode=shared", "--slots=4", "--hcas=mlx5_0,mlx5_1"}, Map.of());
    InfinibandConfig spaced =
        InfinibandConfig.parse(
            new String[] {"--mode", "shared", "--slots", "4", "--hcas", "mlx5_0,mlx5_1"}, Map.of());

    assertThat(spaced).isEqualTo(joined);
    assertThat(spaced.hcas()).containsExactly("mlx5_0", "mlx5_1");
  }

  @Test
  void aMissingConfigFile_isARuntimeFailure_inOneLine(@TempDir Path dir) {
    Path missing = dir.resolve("ib.properties");

    CliRun run = run("--config=" + missing);

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "deviceplugin4j-example-infiniband: cannot read the config file "
                + missing
                + ": no such file"
                + System.lineSeparator());
  }
}
