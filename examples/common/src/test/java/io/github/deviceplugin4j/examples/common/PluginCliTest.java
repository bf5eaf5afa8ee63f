package io.github.deviceplugin4j.examples.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The parts of {@link PluginCli} and {@link EnvironmentDefaults} one example alone does not show;
 * each example's CLI test covers its own options.
 */
class PluginCliTest {
  @TempDir Path dir;

  @Command(name = "probe", mixinStandardHelpOptions = true, versionProvider = ExampleVersion.class)
  static final class Probe implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--root", defaultValue = "/")
    Path root;

    @Option(names = "--poll-interval", defaultValue = "5s")
    Duration pollInterval;

    @Option(names = "--config")
    Path config;

    @Mixin MetricsAddressOption metrics;

    RuntimeException failure;

    @Override
    public Integer call() {
      if (failure != null) {
        throw failure;
      }
      return 0;
    }
  }

  static EnvironmentDefaults defaults(Map<String, String> env) {
    return EnvironmentDefaults.of("X_", env).withPropertiesFile("--config").withExtraKeys("pool.");
  }

  record Run(int code, String out, String err) {}

  static Run run(Probe probe, Map<String, String> env, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        PluginCli.execute(
            probe, defaults(env), new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void flagsWinOverTheEnvironment_whichWinsOverTheFile_whichWinsOverTheDefault() throws Exception {
    Path file = Files.writeString(dir.resolve("x.properties"), "root=/file\npoll-interval=1m\n");

    Probe fromFile = PluginCli.parse(new Probe(), defaults(Map.of("X_CONFIG", file.toString())));
    Probe fromEnv =
        PluginCli.parse(
            new Probe(), defaults(Map.of("X_CONFIG", file.toString(), "X_ROOT", "/env")));
    Probe fromFlag =
        PluginCli.parse(
            new Probe(),
            defaults(Map.of("X_CONFIG", file.toString(), "X_ROOT", "/env")),
            "--root",
            "/flag");

    assertThat(fromFile.root).isEqualTo(Path.of("/file"));
    assertThat(fromFile.pollInterval).isEqualTo(Duration.ofMinutes(1));
    assertThat(fromEnv.root).isEqualTo(Path.of("/env"));
    assertThat(fromFlag.root).isEqualTo(Path.of("/flag"));
    assertThat(PluginCli.parse(new Probe(), defaults(Map.of())).root).isEqualTo(Path.of("/"));
  }

  @Test
  void metricsAddress_comesFromTheSharedVariableAfterThePrefixedOneAndTheFile() throws Exception {
    Path file = Files.writeString(dir.resolve("x.properties"), "metrics-address=:9402\n");

    assertThat(
            PluginCli.parse(new Probe(), defaults(Map.of("METRICS_ADDRESS", ":9400")))
                .metrics
                .address())
        .hasValueSatisfying(a -> assertThat(a.getPort()).isEqualTo(9400));
    assertThat(
            PluginCli.parse(
                    new Probe(),
                    defaults(Map.of("METRICS_ADDRESS", ":9400", "X_CONFIG", file.toString())))
                .metrics
                .address())
        .hasValueSatisfying(a -> assertThat(a.getPort()).isEqualTo(9402));
    assertThat(
            PluginCli.parse(
                    new Probe(),
                    defaults(Map.of("METRICS_ADDRESS", ":9400", "X_METRICS_ADDRESS", ":9401")))
                .metrics
                .address())
        .hasValueSatisfying(a -> assertThat(a.getPort()).isEqualTo(9401));
    assertThat(PluginCli.parse(new Probe(), defaults(Map.of())).metrics.address()).isEmpty();
  }

  @Test
  void extraKeysAreAcceptedFromTheFile_unknownKeysAreNamedWithTheKnownOnes() throws Exception {
    Path good = Files.writeString(dir.resolve("good.properties"), "pool.a.pf-names=eth0\n");
    Path bad = Files.writeString(dir.resolve("bad.properties"), "rot=/x\n");

    Probe probe = PluginCli.parse(new Probe(), defaults(Map.of()), "--config=" + good);

    assertThat(((EnvironmentDefaults) probe.spec.defaultValueProvider()).extra(probe.spec))
        .containsExactly(Map.entry("pool.a.pf-names", "eth0"));
    assertThatThrownBy(() -> PluginCli.parse(new Probe(), defaults(Map.of()), "--config=" + bad))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "unknown key 'rot' in "
                + bad
                + "; known: metrics-address, poll-interval, root, pool.*");
  }

  @Test
  void durations_acceptUnitsAndIso_andRefuseZeroNamingTheFlag() {
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Durations.parse("PT5S")).isEqualTo(Duration.ofSeconds(5));
    assertThat(Durations.parse("7")).isEqualTo(Duration.ofSeconds(7));

    Run zero = run(new Probe(), Map.of(), "--poll-interval=0s");

    assertThat(zero.code()).isEqualTo(PluginCli.USAGE);
    assertThat(zero.err()).contains("'--poll-interval': '0s' is not a positive duration");
  }

  @Test
  void aFailureWhileRunning_isOneLineWithItsCauses_exitOne() {
    Probe probe = new Probe();
    probe.failure =
        new IllegalStateException(
            "cannot serve /x.sock", new java.io.IOException("Permission denied"));

    Run run = run(probe, Map.of());

    assertThat(run.code()).isEqualTo(PluginCli.FAILURE);
    assertThat(run.err())
        .isEqualTo("probe: cannot serve /x.sock: Permission denied" + System.lineSeparator());
  }

  @Test
  void helpWorks_evenWhenTheConfigFileCannotBeRead() {
    Run run = run(new Probe(), Map.of("X_CONFIG", dir.resolve("none").toString()), "--help");

    assertThat(run.code()).isZero();
    assertThat(run.out()).contains("Exit codes:").contains("X_POLL_INTERVAL");
  }
}
