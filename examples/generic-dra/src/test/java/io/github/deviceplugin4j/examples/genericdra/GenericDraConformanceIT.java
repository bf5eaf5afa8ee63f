package io.github.deviceplugin4j.examples.genericdra;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.cli.Main;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fake-kubelet conform --dra} on the generic jar run with {@code --dra} as its own process,
 * as a user would run it in CI. deviceplugin4j-dra-conform on the test class path serves the API
 * server (fabric8's mock in CRUD mode): the driver finds it through the {@code KUBERNETES_MASTER}
 * conform sets, its node through {@code --root} and its devices through {@code --config}, and
 * dra-slices-valid checks the slices it publishes.
 */
class GenericDraConformanceIT {
  @TempDir Path tmp;

  @Test
  void theDriverJarPassesEveryRequiredDraCheck() throws Exception {
    DraTestNode node = new DraTestNode(tmp.resolve("root"), tmp.resolve("etc"));
    Path jar =
        Path.of(
            System.getProperty("genericDra.jar", "target/deviceplugin4j-example-generic-dra.jar"));
    assertThat(jar).as("the driver's jar, built at package").isRegularFile();
    Path xml = tmp.resolve("conformance.xml");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        Main.run(
            new String[] {
              "conform",
              "--dra",
              "--time-scale", // a starved CI runner may miss the suite's 2 s and 5 s limits
              "10",
              "--driver",
              DraTestNode.DRIVER,
              "--node-name",
              "node-1",
              "--junit-xml",
              xml.toString(),
              "--",
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-XX:TieredStopAtLevel=1",
              "-XX:+UseSerialGC",
              "-jar",
              jar.toAbsolutePath().toString(),
              "--dra",
              "--config=" + node.config,
              "--root=" + tmp.resolve("root"),
              "--node-name={node}",
              "--poll-interval=200ms",
              "--plugin-dir={dir}",
              "--registry-dir={registry}",
              "--cdi-dir=" + tmp.resolve("cdi")
            },
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    String report = out.toString(StandardCharsets.UTF_8);
    System.out.println(report); // the suite's report, warnings included, in the build log
    assertThat(exit).as(report + err.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(report)
        .contains("PASS  dra-registers")
        .contains("PASS  dra-serves-service")
        .contains("PASS  dra-prepare-each-claim")
        .contains("PASS  dra-unprepare-unknown")
        .contains("PASS  dra-re-registers-after-restart")
        .contains("PASS  dra-slices-valid")
        .contains("service v1.DRAPlugin")
        .contains("0 failed");
    assertThat(Files.readString(xml)).contains("<testsuite").contains("failures=\"0\"");
  }
}
