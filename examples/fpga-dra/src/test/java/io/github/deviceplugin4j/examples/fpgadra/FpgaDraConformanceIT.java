package io.github.deviceplugin4j.examples.fpgadra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.github.deviceplugin4j.dra.testkit.MockApiServers;
import io.github.deviceplugin4j.testkit.cli.Main;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fake-kubelet conform --dra} on the driver's runnable jar as its own process, as a vendor
 * would run it in CI: the driver finds its API server (fabric8's mock in CRUD mode) through the
 * standard {@code KUBERNETES_MASTER} variable and its node through {@code --root}.
 */
class FpgaDraConformanceIT {
  // Held here: java.util.logging keeps loggers weakly, a level set on a dropped one is lost.
  private static final Logger MOCK_SERVER_LOG = Logger.getLogger("io.fabric8.mockwebserver");

  @TempDir Path tmp;
  private KubernetesMockServer api;
  private KubernetesClient client;

  @BeforeEach
  void startApiServer() {
    MOCK_SERVER_LOG.setLevel(Level.WARNING); // one line per request otherwise
    api =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new KubernetesCrudDispatcher(),
            false);
    api.init();
    client = api.createClient();
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName("node-1").endMetadata().build())
        .create();
  }

  @AfterEach
  void stopApiServer() {
    client.close();
    MockApiServers.destroy(api);
  }

  @Test
  void theDriverJarPassesEveryRequiredDraCheck() throws Exception {
    new DraTestNode(tmp.resolve("root"));
    Path jar =
        Path.of(System.getProperty("fpgaDra.jar", "target/deviceplugin4j-example-fpga-dra.jar"));
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
              "fpga.example.com",
              "--junit-xml",
              xml.toString(),
              "--",
              "env",
              "KUBERNETES_MASTER=" + client.getMasterUrl(),
              "KUBERNETES_AUTH_TRYKUBECONFIG=false",
              "KUBERNETES_AUTH_TRYSERVICEACCOUNT=false",
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-XX:TieredStopAtLevel=1",
              "-XX:+UseSerialGC",
              "-jar",
              jar.toAbsolutePath().toString(),
              "--root=" + tmp.resolve("root"),
              "--node-name=node-1",
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
        .contains("service v1.DRAPlugin")
        .contains("0 failed");
    assertThat(Files.readString(xml)).contains("<testsuite").contains("failures=\"0\"");
  }
}
