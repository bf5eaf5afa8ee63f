package io.github.deviceplugin4j.examples.nic;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.examples.testing.CliRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The plugin's command line, as {@code main} runs it, in this JVM. */
class NicPluginCliTest {
  @TempDir Path dir;

  static CliRun run(String... args) {
    return CliRun.of(new NicPlugin(), NicPlugin.defaults(Map.of()), args);
  }

  @Test
  void help_printsEveryOptionAndTheExitCodes_andExitsZero() {
    CliRun run = run("--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("Usage: deviceplugin4j-example-nic")
        .contains("--config=FILE", "--root=DIR", "--devinfo-dir=DIR", "--poll-interval=DURATION")
        .contains("--metrics-address=[HOST]:PORT", "--pool.<name>.<setting>=VALUE")
        .contains("Exit codes:", "NIC_POLL_INTERVAL");
  }

  @Test
  void version_printsTheProjectVersion_andExitsZero() {
    CliRun run = run("--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).startsWith("deviceplugin4j-example-nic ");
  }

  @Test
  void anUnknownFlag_isAUsageErrorNamingIt_withoutAStackTrace() throws Exception {
    Path file = Files.writeString(dir.resolve("nic.properties"), "pool.a.pf-names=eth0\n");

    CliRun run = run("--config=" + file, "--bogus");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--bogus'").contains("--help");
    assertThat(run.all()).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void flagEqualsValue_andFlagSpaceValue_giveTheSameSettings_poolFlagsToo() throws Exception {
    Path file = Files.writeString(dir.resolve("nic.properties"), "pool.a.pf-names=eth0\n");

    NicConfig joined =
        NicConfig.parse(
            new String[] {"--config=" + file, "--domain=x.example.com", "--pool.b.pf-names=eth1"},
            Map.of());
    NicConfig spaced =
        NicConfig.parse(
            new String[] {
              "--config", file.toString(), "--domain", "x.example.com", "--pool.b.pf-names", "eth1"
            },
            Map.of());

    assertThat(spaced).isEqualTo(joined);
    assertThat(spaced.pools()).extracting(NicPool::name).containsExactly("a", "b");
  }

  @Test
  void theDefaultConfigFileMissing_isARuntimeFailure_inOneLine() {
    CliRun run = CliRun.of(new NicPlugin(), NicPlugin.defaults(Map.of()));

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "deviceplugin4j-example-nic: cannot read the config file"
                + " /etc/deviceplugin4j/nic.properties: no such file"
                + System.lineSeparator());
  }
}
