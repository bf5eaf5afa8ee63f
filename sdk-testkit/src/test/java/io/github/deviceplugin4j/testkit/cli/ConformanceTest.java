package io.github.deviceplugin4j.testkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.plugin.RawPluginMain;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Runs {@code fake-kubelet conform} (in this JVM) against the raw grpc-java test plugin started as
 * a separate JVM by command line: the correct plugin passes every check, and each deliberately
 * broken variant fails exactly the check meant to catch it.
 */
class ConformanceTest {
  @TempDir Path tmp;

  record Run(int exitCode, String output) {}

  static List<String> pluginCommand(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-Xss512k");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(RawPluginMain.class.getName());
    cmd.addAll(List.of(args));
    return cmd;
  }

  static Run conform(List<String> options, List<String> command) {
    List<String> args = new ArrayList<>();
    args.add("conform");
    args.addAll(options);
    args.add("--");
    args.addAll(command);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Main.run(
            args.toArray(String[]::new),
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    String text = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
    System.out.println(text);
    return new Run(code, text);
  }

  @Test
  void aCorrectLegacyPluginPassesEveryCheck() throws Exception {
    Path xml = tmp.resolve("report.xml");
    Run run =
        conform(
            List.of("--dir", tmp.resolve("dp").toString(), "--junit-xml", xml.toString()),
            pluginCommand("--devices", "4"));
    assertThat(run.exitCode()).as(run.output()).isZero();
    for (ConformanceSuite.Check c : ConformanceSuite.Check.values()) {
      assertThat(run.output()).containsPattern("PASS  " + c.id + " ");
    }
    assertThat(run.output())
        .contains("Conformance PASSED: 12 checks, 12 passed, 0 failed, 0 skipped")
        .containsPattern("re-registered \\d+ ms after the restart")
        .contains("4 of 4 healthy devices allocated alone");
    String report = Files.readString(xml);
    assertThat(report)
        .contains("<testsuite name=\"device-plugin-conformance\" tests=\"12\" failures=\"0\"")
        .contains("name=\"re-registers-after-restart: re-registers within 5 s of a restart\"")
        .doesNotContain("<failure");
    assertThat(
            javax.xml.parsers.DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(xml.toFile())
                .getElementsByTagName("testcase")
                .getLength())
        .isEqualTo(12);
  }

  @Test
  void aCorrectWatcherModePluginPassesEveryCheck() {
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--registry",
                tmp.resolve("reg").toString(),
                "--resource",
                "example.com/watched"),
            pluginCommand("--resource", "example.com/watched"));
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("(plugin watcher, endpoint " + tmp.resolve("reg/raw.sock"))
        .contains("plugin info accepted: type DevicePlugin")
        .contains("Conformance PASSED: 12 checks, 12 passed");
  }

  @ParameterizedTest(name = "--break {0} fails {1}")
  @CsvSource({
    "register-before-serving, serves-before-registering",
    "bad-register-first, register-fields",
    "options-error, options-answered",
    "slow-initial-list, initial-list",
    "duplicate-ids, initial-list",
    "bad-allocate-response, allocate-each-device",
    "accept-unknown-ids, unknown-device-refused",
    "die-on-cancel, keeps-serving-after-cancel",
    "no-reregister, re-registers-after-restart",
    "oversize-list, list-under-4mib",
    "keep-socket-on-sigterm, removes-socket-on-sigterm"
  })
  void aBrokenPluginFailsTheCheckMeantToCatchIt(String mode, String check) {
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--checks",
                check,
                "--register-timeout-seconds",
                "3"),
            pluginCommand("--break", mode));
    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output()).containsPattern("FAIL  " + check + " ");
    if (!mode.equals("options-error")) {
      assertThat(run.output()).containsPattern("PASS  registers ");
      // Only the check under test failed.
      assertThat(run.output()).contains(", 1 failed,");
    }
  }
}
