package io.github.deviceplugin4j.testkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.plugin.RawPluginMain;
import io.github.deviceplugin4j.testkit.plugin.ReferenceStubPluginMain;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Runs {@code fake-kubelet conform} (in this JVM) against raw grpc-java test plugins started as
 * separate JVMs by command line: the correct plugin passes every check; each deliberately broken
 * variant fails (required) or warns about (recommended) exactly the check meant to catch it; a
 * plugin that behaves like the kubelet's own reference stub passes every required check. Each test
 * has its own directories, fake kubelet and plugin process, so they run two at a time.
 */
@Execution(ExecutionMode.CONCURRENT)
class ConformanceTest {
  @TempDir Path tmp;

  /**
   * Far longer than a JVM needs to start and register on a starved 2-core runner: no test plugin
   * waits for it (the options-error plugin exits when its registration is refused), so it only
   * bounds a hang.
   */
  static final String REGISTER_TIMEOUT_SECONDS = "120";

  /**
   * The --time-scale of runs meant to pass: a correct plugin on a runner whose cores are both busy
   * can miss the 1 s first-list limit; the broken plugins' runs keep scale 1 (they fail either
   * way).
   */
  static final String PASSING_TIME_SCALE = "10";

  record Run(int exitCode, String output) {}

  static List<String> pluginCommand(String... args) {
    return javaCommand(RawPluginMain.class, args);
  }

  static List<String> stubPluginCommand(String... args) {
    return javaCommand(ReferenceStubPluginMain.class, args);
  }

  private static List<String> javaCommand(Class<?> main, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-Xss512k");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(List.of(args));
    return cmd;
  }

  static Run conform(List<String> options, List<String> command) {
    List<String> args = new ArrayList<>();
    args.add("conform");
    if (!options.contains("--time-scale")) {
      args.addAll(List.of("--time-scale", PASSING_TIME_SCALE));
    }
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
            pluginCommand("--devices", "5", "--unhealthy", "1"));
    assertThat(run.exitCode()).as(run.output()).isZero();
    for (ConformanceSuite.Check c : ConformanceSuite.Check.values()) {
      if (c.dra) {
        continue;
      }
      assertThat(run.output()).containsPattern("PASS  " + c.id + " ");
    }
    assertThat(run.output())
        .contains("refused dev-4 with FAILED_PRECONDITION: device dev-4 is unknown or unhealthy")
        .contains("Conformance PASSED: 14 checks, 14 passed, 0 failed, 0 warnings, 0 skipped")
        .containsPattern("re-registered \\d+ ms after the restart")
        .contains("4 of 4 healthy devices allocated alone");
    String report = Files.readString(xml);
    assertThat(report)
        .contains("<testsuites name=\"device-plugin-conformance\" tests=\"14\" failures=\"0\"")
        .contains(
            "name=\"re-registers-after-restart: registers again after a kubelet restart (late:"
                + " warning; never: failure)\"")
        .doesNotContain("<failure");
    Document doc = parse(xml);
    assertThat(doc.getElementsByTagName("testcase").getLength()).isEqualTo(14);
    assertThat(testcases(doc, "device-plugin-conformance.required")).hasSize(9);
    assertThat(testcases(doc, "device-plugin-conformance.recommended")).hasSize(5);
  }

  static Document parse(Path xml) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(xml.toFile());
  }

  /** The testcase elements of the testsuite with this name, by check id. */
  static Map<String, Element> testcases(Document doc, String suite) {
    Map<String, Element> out = new LinkedHashMap<>();
    NodeList suites = doc.getElementsByTagName("testsuite");
    for (int i = 0; i < suites.getLength(); i++) {
      Element s = (Element) suites.item(i);
      if (s.getAttribute("name").equals(suite)) {
        NodeList cases = s.getElementsByTagName("testcase");
        for (int j = 0; j < cases.getLength(); j++) {
          Element c = (Element) cases.item(j);
          assertThat(c.getAttribute("classname")).isEqualTo(suite);
          out.put(c.getAttribute("name").replaceFirst(":.*", ""), c);
        }
      }
    }
    return out;
  }

  @Test
  void aPluginLikeTheKubeletsReferenceStubPassesEveryRequiredCheckWithWarnings() throws Exception {
    Path xml = tmp.resolve("stub.xml");
    Run run =
        conform(
            List.of("--dir", tmp.resolve("dp").toString(), "--junit-xml", xml.toString()),
            stubPluginCommand("--devices", "3", "--unhealthy", "1", "--pre-start", "--preferred"));
    assertThat(run.exitCode()).as(run.output()).isZero();
    for (ConformanceSuite.Check c : ConformanceSuite.Check.values()) {
      if (c.level == ConformanceSuite.Level.REQUIRED && !c.dra) {
        assertThat(run.output()).containsPattern("PASS  " + c.id + " ");
      }
    }
    assertThat(run.output())
        .containsPattern("WARN  unknown-device-refused .*accepted the unknown device ID")
        .containsPattern("WARN  unhealthy-device-refused .*accepted the unhealthy device \"Dev-3\"")
        .containsPattern("WARN  preferred-allocation-valid .*prefers 0 devices")
        .containsPattern("PASS  keeps-serving-after-cancel ")
        .containsPattern("PASS  removes-socket-on-sigterm ")
        .contains(
            "2 of 2 healthy devices allocated alone; every response well-formed;"
                + " PreStartContainer answered")
        .contains("Conformance PASSED: 14 checks, 11 passed, 0 failed, 3 warnings, 0 skipped");

    Document doc = parse(xml);
    Element root = doc.getDocumentElement();
    assertThat(root.getTagName()).isEqualTo("testsuites");
    assertThat(root.getAttribute("failures")).isEqualTo("0");
    Map<String, Element> recommended = testcases(doc, "device-plugin-conformance.recommended");
    Element warned = recommended.get("unknown-device-refused");
    assertThat(warned.getElementsByTagName("failure").getLength()).isZero();
    assertThat(((Element) warned.getElementsByTagName("skipped").item(0)).getAttribute("message"))
        .startsWith("recommended: Allocate accepted the unknown device ID");
    assertThat(property(warned, "level")).isEqualTo("recommended");
    assertThat(property(warned, "verdict")).isEqualTo("WARN");
    Element passed = testcases(doc, "device-plugin-conformance.required").get("registers");
    assertThat(property(passed, "level")).isEqualTo("required");
    assertThat(passed.getElementsByTagName("skipped").getLength()).isZero();
  }

  @Test
  void strictTurnsTheReferenceStubsWarningsIntoFailures() throws Exception {
    Path xml = tmp.resolve("strict.xml");
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--strict",
                "--junit-xml",
                xml.toString(),
                "--checks",
                "allocate-each-device,unknown-device-refused,removes-socket-on-sigterm"),
            stubPluginCommand());
    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output())
        .containsPattern("PASS  allocate-each-device ")
        .containsPattern("FAIL  unknown-device-refused .*accepted the unknown device ID")
        .containsPattern("PASS  removes-socket-on-sigterm ")
        .contains("recommended checks too (--strict)")
        .contains("Conformance FAILED: 14 checks, 3 passed, 1 failed, 0 warnings, 10 skipped");
    Element failed =
        testcases(parse(xml), "device-plugin-conformance.recommended")
            .get("unknown-device-refused");
    assertThat(((Element) failed.getElementsByTagName("failure").item(0)).getAttribute("type"))
        .isEqualTo("RecommendedConformanceFailure");
    assertThat(failed.getElementsByTagName("skipped").getLength()).isZero();
  }

  private static String property(Element testcase, String name) {
    NodeList props = testcase.getElementsByTagName("property");
    for (int i = 0; i < props.getLength(); i++) {
      Element p = (Element) props.item(i);
      if (p.getAttribute("name").equals(name)) {
        return p.getAttribute("value");
      }
    }
    throw new AssertionError("no property " + name + " on " + testcase.getAttribute("name"));
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
        .contains("Conformance PASSED: 14 checks, 13 passed, 0 failed, 0 warnings, 1 skipped");
  }

  @ParameterizedTest(name = "--break {0} fails the required check {1}")
  @CsvSource({
    "register-before-serving, serves-before-registering",
    "bad-register-first, register-fields",
    "options-error, options-answered",
    "slow-initial-list, initial-list",
    "duplicate-ids, initial-list",
    "bad-allocate-response, allocate-each-device",
    "no-reregister, re-registers-after-restart",
    "oversize-list, list-under-4mib"
  })
  void aBrokenPluginFailsTheRequiredCheckMeantToCatchIt(String mode, String check) {
    assertThat(ConformanceSuite.Check.byId(check).orElseThrow().level)
        .isEqualTo(ConformanceSuite.Level.REQUIRED);
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--checks",
                check,
                "--register-timeout-seconds",
                REGISTER_TIMEOUT_SECONDS,
                // no-reregister never comes back: any timeout shows it, a short one is quick.
                "--restart-timeout",
                "5",
                "--time-scale",
                "1"),
            pluginCommand("--break", mode));
    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output()).containsPattern("FAIL  " + check + " ");
    if (!mode.equals("options-error")) {
      assertThat(run.output()).containsPattern("PASS  registers ");
      // Only the check under test failed.
      assertThat(run.output()).contains(", 1 failed,");
    }
  }

  @ParameterizedTest(name = "--break {0} warns about the recommended check {1}")
  @CsvSource({
    "accept-unknown-ids, unknown-device-refused",
    "die-on-cancel, keeps-serving-after-cancel",
    "keep-socket-on-sigterm, removes-socket-on-sigterm"
  })
  void aBrokenPluginWarnsAboutTheRecommendedCheckMeantToCatchIt(String mode, String check) {
    assertThat(ConformanceSuite.Check.byId(check).orElseThrow().level)
        .isEqualTo(ConformanceSuite.Level.RECOMMENDED);
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--checks",
                check,
                "--register-timeout-seconds",
                REGISTER_TIMEOUT_SECONDS,
                "--time-scale",
                "1"),
            pluginCommand("--break", mode));
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .containsPattern("PASS  registers ")
        .containsPattern("WARN  " + check + " ")
        .contains("Conformance PASSED: 14 checks, 1 passed, 0 failed, 1 warning, 12 skipped");
  }

  @Test
  void aPluginBackSixSecondsAfterARestartPassesWithAWarningGivingTheTime() {
    // The kubelet accepts a registration whenever it comes (plugin/v1beta1/server.go sets no
    // deadline): a late one warns with the time it took; only "never" fails.
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--checks",
                "re-registers-after-restart",
                "--register-timeout-seconds",
                REGISTER_TIMEOUT_SECONDS,
                // Scale 1: "late" means later than the 5 s a prompt plugin needs.
                "--time-scale",
                "1",
                // The plugin waits 6 s on its own timer; 120 s leaves a starved machine room.
                "--restart-timeout",
                "120"),
            pluginCommand("--re-register-delay-ms", "6000"));
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .containsPattern(
            "WARN  re-registers-after-restart +\\d+ ms  registered again late, \\d+ ms after the"
                + " restart \\(more than 5 s\\)")
        .contains("the kubelet accepts it")
        .contains("Conformance PASSED: 14 checks, 1 passed, 0 failed, 1 warning, 12 skipped");
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("registered again late, (\\d+) ms").matcher(run.output());
    assertThat(m.find()).isTrue();
    assertThat(Long.parseLong(m.group(1))).isGreaterThanOrEqualTo(6000);
  }

  @Test
  void aPluginThatNeverComesBackFailsWithADistinctMessage() {
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--checks",
                "re-registers-after-restart",
                "--register-timeout-seconds",
                REGISTER_TIMEOUT_SECONDS,
                // It never comes back, so any timeout shows it; a short one keeps the test quick.
                "--restart-timeout",
                "3"),
            pluginCommand("--break", "no-reregister"));
    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output())
        .containsPattern("FAIL  re-registers-after-restart ")
        .contains("never registered again: no registration of example.com/raw within 3 s")
        .doesNotContain("registered again late");
  }

  @Test
  void everyResourceThePluginRegistersIsCheckedAndNamed() {
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--register-timeout-seconds",
                REGISTER_TIMEOUT_SECONDS),
            pluginCommand("--devices", "2", "--also", "example.com/second"));
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("resources:        example.com/raw, example.com/second (every resource it")
        .containsPattern("PASS  allocate-each-device +\\d+ ms  \\[example.com/raw\\] ")
        .containsPattern("PASS  allocate-each-device +\\d+ ms  \\[example.com/second\\] ")
        .containsPattern("PASS  list-under-4mib +\\d+ ms  \\[example.com/second\\] ")
        .containsPattern("re-registered example.com/raw \\d+ ms, example.com/second \\d+ ms");
  }

  @Test
  void aPluginCommandThatCannotStartIsOneLineExitOneAndAJunitXml() throws Exception {
    Path xml = tmp.resolve("out/none.xml");
    Run run =
        conform(List.of("--junit-xml", xml.toString()), List.of(tmp.resolve("no/such").toString()));
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.output())
        .contains(
            "fake-kubelet conform: cannot start the plugin command: "
                + tmp.resolve("no/such")
                + ": no such file")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
    Document doc = parse(xml);
    Element registers = testcases(doc, "device-plugin-conformance.required").get("registers");
    assertThat(
            ((Element) registers.getElementsByTagName("failure").item(0)).getAttribute("message"))
        .contains("cannot start the plugin command");
  }

  @Test
  void aPluginBehindAWrapperScriptWithoutExecDoesNotOutliveTheRun() throws Exception {
    // The wrapper runs the plugin as its child (no exec): only a signal to the whole process
    // group reaches the plugin.
    String marker = "wrapped-" + System.nanoTime();
    Path script = tmp.resolve("wrapper.sh");
    List<String> plugin = pluginCommand("--socket", marker + ".sock");
    StringBuilder line = new StringBuilder();
    for (String a : plugin) {
      line.append('\'').append(a.replace("'", "'\\''")).append("' ");
    }
    Files.writeString(script, "#!/bin/sh\n" + line + "\necho wrapper done\n");
    script.toFile().setExecutable(true);
    Run run =
        conform(
            List.of(
                "--dir",
                tmp.resolve("dp").toString(),
                "--checks",
                "removes-socket-on-sigterm",
                "--register-timeout-seconds",
                REGISTER_TIMEOUT_SECONDS),
            List.of(script.toString()));
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output()).containsPattern("PASS  removes-socket-on-sigterm ");
    assertThat(
            ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().orElse("").contains(marker))
                .filter(ProcessHandle::isAlive)
                .toList())
        .as("plugin processes left running")
        .isEmpty();
  }

  @Test
  void draAgainstADevicePluginSaysSoAtOnce() {
    Run run =
        conform(
            List.of("--dra", "--register-timeout-seconds", REGISTER_TIMEOUT_SECONDS),
            pluginCommand());
    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output())
        .startsWith("DRA driver conformance (deviceplugin4j fake kubelet)")
        .doesNotContain("Device plugin conformance")
        .contains("the plugin registered as a device plugin (example.com/raw), not as a DRA driver")
        .contains("run conform without --dra");
  }
}
