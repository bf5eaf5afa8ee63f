package io.github.deviceplugin4j.testkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.plugin.TestDraDriverMain;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fake-kubelet conform --dra} against a raw grpc-java DRA driver run as its own JVM. */
class DraConformanceTest {
  @TempDir Path tmp;

  private List<String> driver(String... flags) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(TestDraDriverMain.class.getName());
    cmd.add("fpga.example.com");
    cmd.add("{dir}/dra.sock");
    cmd.add("{registry}/fpga.example.com-reg.sock");
    cmd.addAll(List.of(flags));
    return cmd;
  }

  private List<String> options() {
    return List.of(
        "--dra",
        "--driver",
        "fpga.example.com",
        "--dir",
        tmp.resolve("p").toString(),
        "--registry-dir",
        tmp.resolve("reg").toString(),
        "--register-timeout-seconds",
        ConformanceTest.REGISTER_TIMEOUT_SECONDS);
  }

  @Test
  void aCorrectDraDriverPassesEveryDraCheck() {
    ConformanceTest.Run run = ConformanceTest.conform(options(), driver());
    assertThat(run.exitCode()).as(run.output()).isZero();
    for (ConformanceSuite.Check c : ConformanceSuite.Check.values()) {
      if (c == ConformanceSuite.Check.DRA_SLICES_VALID
          || c == ConformanceSuite.Check.DRA_UNHEALTHY_TAINTED) {
        // sdk-testkit alone has no API server: see withoutAnApiServer...
        assertThat(run.output()).containsPattern("SKIP  " + c.id + " ");
      } else if (c.dra) {
        assertThat(run.output()).containsPattern("PASS  " + c.id + " ");
      } else {
        assertThat(run.output()).doesNotContain(" " + c.id + " ");
      }
    }
    assertThat(run.output())
        .contains("service v1.DRAPlugin")
        .containsPattern("registered again \\d+ ms after the restart");
  }

  @Test
  void withoutAnApiServerProviderTheSliceChecksSkipSayingWhichJarHasOne() {
    List<String> options = new ArrayList<>(options());
    options.addAll(List.of("--checks", "dra-slices-valid,dra-unhealthy-tainted"));
    options.addAll(List.of("--make-unhealthy", "true"));
    ConformanceTest.Run run = ConformanceTest.conform(options, driver());
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("API server:       none")
        .containsPattern(
            "SKIP  dra-slices-valid .*run conform from deviceplugin4j-dra-conform's -cli jar,"
                + " which serves a Kubernetes API server for the driver")
        .containsPattern("SKIP  dra-unhealthy-tainted .*deviceplugin4j-dra-conform's -cli jar");
  }

  @Test
  void aDriverListingTheFullGrpcNamesFailsRegistrationNamingTheExpectedStrings() {
    // 1.34 and newer (the default profile) refuse it with the kubelet's own text.
    ConformanceTest.Run latest = ConformanceTest.conform(options(), driver("--full-grpc-names"));
    assertThat(latest.exitCode()).as(latest.output()).isEqualTo(1);
    assertThat(latest.output())
        .containsPattern("FAIL  dra-registers .*none of services supported by the plugin")
        .contains("list \"v1.DRAPlugin\" and/or \"v1beta1.DRAPlugin\"");

    // 1.32 accepts it on v1alpha3.Node, where every call would fail: the check still fails.
    List<String> v132 = new ArrayList<>(options());
    v132.addAll(List.of("--kubelet-version", "1.32"));
    ConformanceTest.Run old = ConformanceTest.conform(v132, driver("--full-grpc-names"));
    assertThat(old.exitCode()).as(old.output()).isEqualTo(1);
    assertThat(old.output())
        .containsPattern("FAIL  dra-registers .*falls back to v1alpha3.Node")
        .contains("list \"v1.DRAPlugin\" and/or \"v1beta1.DRAPlugin\"");
  }

  @Test
  void aDriverThatLeavesClaimsOutFailsAndOneWithoutHealthWarns() {
    ConformanceTest.Run run =
        ConformanceTest.conform(options(), driver("--skip-all", "--no-health"));
    assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
    assertThat(run.output())
        .containsPattern("FAIL  dra-prepare-each-claim .*NodePrepareResources skipped 2")
        .containsPattern("WARN  dra-health-stream .*UNIMPLEMENTED")
        .containsPattern("PASS  dra-unprepare-unknown ");
  }
}
