package io.github.deviceplugin4j.examples.genericdra;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.testing.CliRun;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The DRA driver's command line ({@code --dra}), as {@code main} runs it, in this JVM. */
class GenericDraCliTest {

  static CliRun run(Map<String, String> env, String... args) {
    return CliRun.of(new GenericDraCommand(), GenericDraCommand.defaults(env), args);
  }

  @Test
  void help_printsEveryOptionAndTheExitCodes_andExitsZero() {
    CliRun run = run(Map.of(), "--dra", "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("Usage: deviceplugin4j-example-generic-dra")
        .contains("--dra", "--config=FILE", "--driver-name=NAME", "--node-name=NODE")
        .contains("--plugin-dir=DIR", "--cdi-dir=DIR", "--pod-uid=UID", "Exit codes:");
  }

  @Test
  void version_printsTheProjectVersion_andExitsZero() {
    CliRun run = run(Map.of(), "--dra", "--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).startsWith("deviceplugin4j-example-generic-dra ");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withoutAStackTrace() {
    CliRun run = run(Map.of("NODE_NAME", "n1"), "--dra", "--bogus");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--bogus'");
    assertThat(run.all()).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void aMissingNodeName_isAUsageErrorSayingWhereToSetIt() {
    CliRun run = run(Map.of(), "--dra");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("NODE_NAME", "--node-name");
  }

  @Test
  void flagEqualsValue_andFlagSpaceValue_giveTheSameOptions() {
    GenericDraDriver.Options joined =
        GenericDraDriver.Options.parse(
            new String[] {"--dra", "--node-name=n1", "--driver-name=x.example.com"}, Map.of());
    GenericDraDriver.Options spaced =
        GenericDraDriver.Options.parse(
            new String[] {"--dra", "--node-name", "n1", "--driver-name", "x.example.com"},
            Map.of());

    assertThat(spaced).isEqualTo(joined);
    assertThat(spaced.pluginDir()).isEqualTo(Path.of("/var/lib/kubelet/plugins/x.example.com"));
  }

  @Test
  void aMissingConfigFile_isARuntimeFailure_inOneLine(@TempDir Path dir) {
    Path missing = dir.resolve("config.yaml");

    CliRun run = run(Map.of("NODE_NAME", "n1"), "--dra", "--config=" + missing);

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .startsWith("deviceplugin4j-example-generic-dra: ")
        .contains(missing.toString());
    assertThat(run.err().lines()).hasSize(1);
  }
}
