package io.github.deviceplugin4j.docs.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.cli.Main;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * getting-started.md runs the tutorial's plugin, as a separate process, under the fake kubelet's
 * conformance suite; this test does the same and expects every check to pass.
 */
class ConformanceTest {

  @TempDir Path root;

  @Test
  void theTutorialPluginPassesTheConformanceSuite() throws IOException {
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
    Files.createFile(root.resolve("dev/accel1"));
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Path xml = root.resolve("conformance.xml");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        Main.run(
            new String[] {
              "conform",
              "--time-scale", // a starved CI runner may miss the 1 s first-list limit
              "10",
              "--junit-xml",
              xml.toString(),
              "--",
              "env",
              "PLUGINS_REGISTRY_DIR={dir}/no-registry", // legacy mode even on a Kubernetes node
              java.toString(),
              "-XX:TieredStopAtLevel=1",
              "-XX:+UseSerialGC",
              "-cp",
              System.getProperty("java.class.path"),
              "com.example.accel.AccelPlugin",
              root.toString()
            },
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    String report = out.toString(StandardCharsets.UTF_8);
    assertThat(exit).as(report + err.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(report)
        .contains("PASS  registers")
        .contains("PASS  re-registers-after-restart")
        .contains("PASS  removes-socket-on-sigterm")
        .contains("SKIP  preferred-allocation ") // the tutorial backend does not offer it
        .contains("SKIP  preferred-allocation-valid ")
        .contains("SKIP  unhealthy-device-refused ") // every tutorial device is healthy
        .contains("Conformance PASSED: 14 checks, 11 passed, 0 failed, 0 warnings, 3 skipped");
    assertThat(Files.readString(xml)).contains("<testsuite").contains("failures=\"0\"");
  }
}
