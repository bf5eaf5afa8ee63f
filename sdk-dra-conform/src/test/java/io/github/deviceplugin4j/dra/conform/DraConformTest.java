package io.github.deviceplugin4j.dra.conform;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.cli.Main;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code conform --dra} with this module's API server on the class path, against {@link
 * ConformTestDriver} run as its own JVM: the slice checks run instead of being skipped.
 */
class DraConformTest {
  @TempDir Path tmp;

  record Run(int exitCode, String output) {}

  private Run conform(String mode, String... options) {
    List<String> args = new ArrayList<>();
    args.addAll(
        List.of(
            "conform",
            "--dra",
            "--driver",
            ConformTestDriver.DRIVER,
            "--register-timeout-seconds",
            "120",
            "--checks",
            "dra-slices-valid,dra-unhealthy-tainted"));
    args.addAll(List.of(options));
    if (!args.contains("--time-scale")) {
      // A starved CI runner; only a failing check waits that long.
      args.addAll(List.of("--time-scale", "6"));
    }
    args.addAll(
        List.of(
            "--",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-cp",
            System.getProperty("java.class.path"),
            ConformTestDriver.class.getName(),
            mode,
            "{dir}",
            tmp.toString()));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Main.run(
            args.toArray(String[]::new),
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    String output = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
    System.out.println(output);
    return new Run(code, output);
  }

  private String touch(String name) {
    return "touch " + tmp.resolve(name);
  }

  @Test
  void aDriverThatTaintsAnUnhealthyDeviceAndPublishesValidSlicesPassesBoth() {
    Run run =
        conform(
            "good",
            "--node-name",
            "node-7",
            "--make-unhealthy",
            touch("broken") + " && test \"$NODE_NAME\" = {node} && test -f \"$KUBECONFIG\"",
            "--make-healthy",
            "rm " + tmp.resolve("broken"));

    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .containsPattern("API server: +http://.*fabric8 mock API server, CRUD mode; node node-7")
        .containsPattern(
            "PASS  dra-slices-valid .*1 slice, 3 devices in pool node-7 \\(nodeName=node-7\\)")
        .containsPattern(
            "PASS  dra-unhealthy-tainted .*device dev-0 tainted conform.example.com/unhealthy="
                + ".* effect NoSchedule .*; taint gone \\d+ ms after --make-healthy");
  }

  @Test
  void aSliceThatBreaksTheApiServersRulesFailsNamingTheSliceAndTheRule() {
    Run run = conform("bad-slice");

    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output())
        .containsPattern(
            "FAIL  dra-slices-valid .*slice hand-written: 129 devices in one slice, at most 128"
                + " are allowed")
        .contains("slice hand-written: device 'Bad_Name': name must be a DNS label")
        .containsPattern("SKIP  dra-unhealthy-tainted .*--make-unhealthy COMMAND");
  }

  @Test
  void aDriverThatLeavesAnUnhealthyDeviceOutWarns() {
    Run run = conform("leave-out", "--make-unhealthy", touch("broken"));

    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .containsPattern("PASS  dra-slices-valid ")
        .containsPattern(
            "WARN  dra-unhealthy-tainted .*device dev-0 left out of the slices \\d+ ms after"
                + " --make-unhealthy instead of tainted");
  }

  @Test
  void aDriverThatNeverTaintsFailsWithStrict() {
    Run run =
        conform(
            "ignore-health",
            "--strict",
            "--time-scale", // the check waits the whole limit: keep it 10 s
            "1",
            "--make-unhealthy",
            touch("broken"));

    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output())
        .containsPattern(
            "FAIL  dra-unhealthy-tainted .*no device of conform.example.com got a taint with a key"
                + " under conform.example.com/");
  }
}
