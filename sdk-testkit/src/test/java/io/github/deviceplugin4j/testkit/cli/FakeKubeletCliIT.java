package io.github.deviceplugin4j.testkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped command: the shaded jar run through {@code bin/fake-kubelet}, each in its own
 * process, against the raw test plugin in another.
 */
class FakeKubeletCliIT {
  @TempDir Path tmp;

  private static List<String> script(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("fakeKubelet.script"));
    cmd.addAll(List.of(args));
    return cmd;
  }

  private static ProcessBuilder withJar(ProcessBuilder pb) {
    pb.environment().put("FAKE_KUBELET_JAR", System.getProperty("fakeKubelet.jar"));
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    return pb;
  }

  @Test
  void conformRunsTheSuiteAndWritesJunitXml() throws Exception {
    assertThat(Path.of(System.getProperty("fakeKubelet.jar"))).exists();
    List<String> cmd =
        script(
            "conform",
            "--time-scale",
            ConformanceTest.PASSING_TIME_SCALE,
            "--dir",
            tmp.resolve("dp").toString(),
            "--junit-xml",
            tmp.resolve("out/conformance.xml").toString(),
            "--");
    cmd.addAll(ConformanceTest.pluginCommand("--devices", "3"));
    Process p = withJar(new ProcessBuilder(cmd)).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    System.out.println(output);
    assertThat(p.exitValue()).as(output).isZero();
    assertThat(output)
        .contains("Conformance PASSED: 14 checks, 13 passed, 0 failed, 0 warnings, 1 skipped")
        .doesNotContain("SLF4J")
        .doesNotContain("SO_KEEPALIVE");
    assertThat(Files.readString(tmp.resolve("out/conformance.xml")))
        .contains("tests=\"14\" failures=\"0\"");
  }

  @Test
  void conformStrictExitsNonZeroForAPluginThatFailsARecommendedCheck() throws Exception {
    List<String> cmd =
        script(
            "conform",
            "--dir",
            tmp.resolve("dp").toString(),
            "--checks",
            "unknown-device-refused",
            "--strict",
            "--");
    cmd.addAll(ConformanceTest.pluginCommand("--break", "accept-unknown-ids"));
    Process p = withJar(new ProcessBuilder(cmd)).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isEqualTo(1);
    assertThat(output).contains("FAIL  unknown-device-refused");
  }

  @Test
  void serveTakesCommandsOnStdinAndPrintsJsonLines() throws Exception {
    Path dir = tmp.resolve("dp");
    Process serve =
        withJar(new ProcessBuilder(script("serve", "--dir", dir.toString())))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    Process plugin = null;
    try (BufferedReader out =
            new BufferedReader(
                new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
        Writer in = new OutputStreamWriter(serve.getOutputStream(), StandardCharsets.UTF_8)) {
      List<String> lines = new ArrayList<>();
      String line;
      while ((line = out.readLine()) != null && !line.contains("\"type\":\"ready\"")) {
        lines.add(line);
      }
      assertThat(line)
          .as(lines.toString())
          .contains("\"kubeletSocket\":\"" + dir.resolve("kubelet.sock"));
      ProcessBuilder pb =
          new ProcessBuilder(ConformanceTest.pluginCommand("--devices", "2"))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD);
      pb.environment().put("DEVICE_PLUGIN_DIR", dir.toString());
      plugin = pb.start();
      in.write("await-registration example.com/raw 20\n");
      in.write("await-devices example.com/raw 2 10\n");
      in.write("allocate example.com/raw 2\n");
      in.write("devices example.com/raw\n");
      in.write("allocate example.com/raw 1\n");
      in.write("bogus\n");
      in.write("quit\n");
      in.flush();
      while ((line = out.readLine()) != null) {
        lines.add(line);
      }
      assertThat(serve.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(serve.exitValue()).isZero();
      assertThat(lines)
          .anyMatch(l -> l.startsWith("{\"type\":\"event\"") && l.contains("\"kind\":\"REGISTER\""))
          .anyMatch(l -> l.startsWith("{\"type\":\"registered\",\"resource\":\"example.com/raw\""))
          .anyMatch(
              l ->
                  l.startsWith("{\"type\":\"allocation\"")
                      && l.contains("\"deviceIds\":[\"dev-1\",\"dev-0\"]")
                      && l.contains("\"envs\":[\"TEST_DEVICES=dev-1,dev-0\"]"))
          .anyMatch(
              l ->
                  l.startsWith("{\"type\":\"devices\"")
                      && l.contains("\"capacity\":2")
                      && l.contains("\"ids\":[\"dev-0\",\"dev-1\"]"))
          .anyMatch(
              l ->
                  l.startsWith("{\"type\":\"error\",\"command\":\"allocate example.com/raw 1\"")
                      && l.contains("Requested: 1, Available: 0"))
          .anyMatch(l -> l.startsWith("{\"type\":\"error\",\"command\":\"bogus\""))
          .last()
          .isEqualTo("{\"type\":\"bye\"}");
    } finally {
      serve.destroyForcibly();
      if (plugin != null) {
        plugin.destroy();
        plugin.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
