package io.github.deviceplugin4j.examples.generic;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.testing.CliRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The device plugin's command line, as {@code main} runs it, in this JVM. */
class GenericPluginCliTest {
  @TempDir Path dir;

  static CliRun run(String... args) {
    return CliRun.of(new GenericPluginCommand(), GenericPluginCommand.defaults(Map.of()), args);
  }

  @Test
  void help_printsEveryOptionAndTheExitCodes_andExitsZero() {
    CliRun run = run("--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("Usage: deviceplugin4j-example-generic")
        .contains("--config=FILE", "--root=DIR", "--poll-interval=DURATION")
        .contains("--metrics-address=[HOST]:PORT", "Exit codes:", "GENERIC_POLL_INTERVAL");
  }

  @Test
  void version_printsTheProjectVersion_andExitsZero() {
    CliRun run = run("--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).startsWith("deviceplugin4j-example-generic ");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withTheNearestKnownOne() {
    CliRun run = run("--rot=/host");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--rot=/host'").contains("--root");
    assertThat(run.all()).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void draIsAUsageError_namingTheJarThatHasIt() {
    CliRun run = run("--dra", "--root=/");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("deviceplugin4j-example-generic-dra.jar");
  }

  @Test
  void aPollIntervalThatIsNotADuration_isAUsageErrorNamingTheFlag() {
    CliRun run = run("--poll-interval=often");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("'--poll-interval'", "'often'");
  }

  @Test
  void configSpaceFile_andConfigEqualsFile_giveTheSameSettings() {
    GenericPluginCommand spaced =
        PluginCli.parse(
            new GenericPluginCommand(),
            GenericPluginCommand.defaults(Map.of()),
            "--config",
            "/etc/x.yaml",
            "--poll-interval",
            "2s");
    GenericPluginCommand joined =
        PluginCli.parse(
            new GenericPluginCommand(),
            GenericPluginCommand.defaults(Map.of()),
            "--config=/etc/x.yaml",
            "--poll-interval=2s");

    assertThat(spaced.config).isEqualTo(joined.config).isEqualTo(Path.of("/etc/x.yaml"));
    assertThat(spaced.scan.pollInterval())
        .isEqualTo(joined.scan.pollInterval())
        .isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void aMissingConfigFile_isARuntimeFailure_inOneLine() {
    Path missing = dir.resolve("config.yaml");

    CliRun run = run("--config", missing.toString(), "--root", dir.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .startsWith("deviceplugin4j-example-generic: ")
        .contains(missing.toString());
    assertThat(run.err().lines()).hasSize(1);
    assertThat(run.all()).doesNotContain("\tat ");
  }

  @Test
  void aBadKeyInTheFile_isARuntimeFailure_namingTheKey() throws Exception {
    Path config = Files.writeString(dir.resolve("config.yaml"), "resources:\n  - nme: x\n");

    CliRun run = run("--config=" + config, "--root=" + dir);

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).contains("nme");
    assertThat(run.err().lines()).hasSize(1);
  }
}
