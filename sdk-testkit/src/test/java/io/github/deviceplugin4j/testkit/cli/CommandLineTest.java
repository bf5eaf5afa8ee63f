package io.github.deviceplugin4j.testkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@code fake-kubelet} command-line convention: {@code --help} and {@code --version} exit 0 for
 * the program and each command, {@code --flag value} and {@code --flag=value}, usage errors name
 * the option and exit 2 without a stack trace, runtime failures exit 1 with one line.
 */
class CommandLineTest {
  @TempDir Path tmp;

  record Out(int code, String out, String err) {}

  static Out run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Main.run(
            args,
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Out(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @ParameterizedTest(name = "{0} --help")
  @ValueSource(strings = {"", "serve", "conform"})
  void helpPrintsTheUsageWithTheExitCodesAndExitsZero(String command) {
    for (String flag : new String[] {"--help", "-h"}) {
      Out o = command.isEmpty() ? run(flag) : run(command, flag);
      assertThat(o.code()).isZero();
      assertThat(o.err()).isEmpty();
      assertThat(o.out())
          .contains("Usage: fake-kubelet" + (command.isEmpty() ? "" : " " + command))
          .contains("Exit codes:")
          .contains("2   a usage error");
    }
  }

  @Test
  void conformHelpListsEveryCheckAndTheNewRestartTimeout() {
    Out o = run("conform", "--help");
    for (ConformanceSuite.Check c : ConformanceSuite.Check.values()) {
      assertThat(o.out()).contains(c.id);
    }
    assertThat(o.out()).contains("--restart-timeout=SECONDS").contains("(default: 60)");
    assertThat(o.out())
        .contains("--node-name=NAME")
        .contains("--make-unhealthy=COMMAND")
        .contains("--make-healthy=COMMAND")
        .contains("deviceplugin4j-dra-conform");
  }

  @ParameterizedTest(name = "{0} --version")
  @ValueSource(strings = {"", "serve", "conform"})
  void versionPrintsTheVersionAndExitsZero(String command) {
    Out o = command.isEmpty() ? run("--version") : run(command, "--version");
    assertThat(o.code()).isZero();
    assertThat(o.out()).startsWith("fake-kubelet (deviceplugin4j testkit) ").contains("Java ");
    assertThat(o.out().lines().findFirst().orElseThrow()).doesNotEndWith("unknown");
  }

  @Test
  void serveAndConformListTheSameKubeletVersions() {
    String serve = run("serve", "--help").out();
    String conform = run("conform", "--help").out();
    String line = "The kubelet to model where versions differ: " + KubeletVersionOption.VERSIONS;
    assertThat(serve.replaceAll("\\s+", " ")).contains(line);
    assertThat(conform.replaceAll("\\s+", " ")).contains(line);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "conform --bogus -- x | Unknown option: '--bogus'",
        "conform --time-scale abc -- x | '--time-scale': 'abc' is not a long",
        "conform --time-scale 0 -- x | --time-scale: 0 is not between 1 and 100",
        "conform --restart-timeout 0 -- x | --restart-timeout: 0 is not a positive number",
        "conform --checks nope -- x | --checks: unknown check 'nope'",
        "conform --resource -- x | Expected parameter for option '--resource' but found '--'",
        "conform | conform needs the plugin command after --",
        "serve | Missing required option: '--dir=DIR'",
        "serve --dir /tmp/x --kubelet-version 1.20 | '--kubelet-version': unknown kubelet version"
            + " '1.20'",
        "serve --dir=/tmp/x --grace-period-seconds=-1 | --grace-period-seconds: -1 is negative",
        "frobnicate | Unmatched argument at index 0: 'frobnicate'",
        "\"\" | a command is needed: serve or conform"
      })
  void usageErrorsNameTheOptionAndExitTwoWithoutAStackTrace(String argv, String message) {
    String[] args = argv.isEmpty() ? new String[0] : argv.split(" ");
    Out o = run(args);
    assertThat(o.code()).as(o.err()).isEqualTo(2);
    assertThat(o.err())
        .contains(message)
        .contains("--help' for the options.")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void flagEqualsValueWorksLikeFlagSpaceValue() throws Exception {
    // Both forms reach the same option: an unknown version is refused the same way.
    Out spaced = run("serve", "--dir", tmp.toString(), "--kubelet-version", "9.9");
    Out joined = run("serve", "--dir=" + tmp, "--kubelet-version=9.9");
    assertThat(spaced.code()).isEqualTo(2);
    assertThat(joined.code()).isEqualTo(2);
    assertThat(joined.err()).isEqualTo(spaced.err());
    // And a valid one is taken: serve starts, reads the end of stdin and exits.
    Path dir = tmp.resolve("dp");
    Out ok = run("serve", "--dir=" + dir, "--kubelet-version=1.26", "--exit-on-eof");
    assertThat(ok.code()).as(ok.err()).isZero();
    assertThat(ok.out()).contains("\"type\":\"ready\"").contains("\"type\":\"bye\"");
  }

  @Test
  void aRuntimeFailureExitsOneWithOneLine() throws Exception {
    // The plugin directory cannot be created under a regular file.
    Path file = Files.writeString(tmp.resolve("file"), "x");
    Out o = run("serve", "--dir", file.resolve("dp").toString(), "--exit-on-eof");
    assertThat(o.code()).isEqualTo(1);
    assertThat(o.err().lines()).hasSize(1);
    assertThat(o.err())
        .startsWith("fake-kubelet serve: cannot create the plugin directory")
        .doesNotContain("\tat ");
  }
}
