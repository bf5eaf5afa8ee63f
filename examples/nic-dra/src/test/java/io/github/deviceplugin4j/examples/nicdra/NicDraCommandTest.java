package io.github.deviceplugin4j.examples.nicdra;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.testing.CliRun;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The NIC DRA driver's command line follows the examples' convention. */
class NicDraCommandTest {

  @TempDir Path dir;

  private static CliRun run(String... args) {
    return CliRun.of(new NicDraCommand(Map.of()), EnvironmentDefaults.none(), args);
  }

  @Test
  void help_printsWhatItTakes_exitsZero() {
    CliRun r = run("--help");

    assertThat(r.exitCode()).isZero();
    assertThat(r.out())
        .contains("deviceplugin4j-example-nic-dra")
        .contains("NODE_NAME")
        .contains("Exit codes:");
  }

  @Test
  void version_exitsZero() {
    assertThat(run("--version").exitCode()).isZero();
  }

  @Test
  void missingNicConfigFile_isOneLineNamingIt() {
    CliRun r = run();

    assertThat(r.exitCode()).isNotZero();
    assertThat(r.all())
        .contains("/etc/deviceplugin4j/nic.properties")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withoutAStackTrace() throws IOException {
    Path config = Files.writeString(dir.resolve("nic.properties"), "");
    CliRun r = run("--config=" + config, "--bogus=1");

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.all()).contains("--bogus").doesNotContain("Exception").doesNotContain("\tat ");
  }
}
