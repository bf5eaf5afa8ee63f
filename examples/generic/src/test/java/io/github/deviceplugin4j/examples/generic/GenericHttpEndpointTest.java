package io.github.deviceplugin4j.examples.generic;

import static io.github.deviceplugin4j.examples.generic.GenericPluginTest.KEY;
import static io.github.deviceplugin4j.examples.generic.GenericPluginTest.NIC;
import static io.github.deviceplugin4j.examples.generic.GenericPluginTest.SERIAL;
import static io.github.deviceplugin4j.examples.testing.PluginUnderTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.fixtures.GenericNode;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The generic plugin's /healthz, /readyz and /metrics, started from its command line's options,
 * over HTTP, with the fake kubelet over real sockets.
 */
class GenericHttpEndpointTest {
  @TempDir Path root;
  @TempDir Path run;

  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(GenericPluginCommand.Running plugin, String path)
      throws Exception {
    URI uri =
        URI.create("http://127.0.0.1:" + plugin.http().orElseThrow().address().getPort() + path);
    return http.send(
        HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void readyzIs503UntilEveryResourceRegisters_thenProbesAre200_andMetricsNameEachResource()
      throws Exception {
    GenericNode.write(SysfsTree.create(root));
    Path config = Files.writeString(run.resolve("config.yaml"), GenericNode.THREE);
    Path pluginDir = Files.createDirectory(run.resolve("dp"));
    GenericPluginCommand command =
        PluginCli.parse(
            new GenericPluginCommand(),
            GenericPluginCommand.defaults(Map.of()),
            "--config=" + config,
            "--root",
            root.toString(),
            "--metrics-address=127.0.0.1:0");

    try (GenericPluginCommand.Running plugin =
        command.start(b -> b.pluginDir(pluginDir).registrationMode(RegistrationMode.LEGACY))) {
      HttpResponse<String> notReady = get(plugin, "/readyz");
      assertThat(notReady.statusCode()).isEqualTo(503);
      assertThat(notReady.body()).contains(SERIAL).contains("not registered");
      assertThat(get(plugin, "/healthz").statusCode()).isEqualTo(200);

      try (FakeKubelet kubelet = FakeKubelet.start(pluginDir)) {
        for (String resource : List.of(SERIAL, KEY, NIC)) {
          kubelet.awaitRegistration(resource, WAIT);
        }
        await().atMost(WAIT).until(() -> get(plugin, "/readyz").statusCode() == 200);
        assertThat(get(plugin, "/readyz").body()).isEqualTo("ok\n");
        HttpResponse<String> live = get(plugin, "/healthz");
        assertThat(live.statusCode()).isEqualTo(200);
        assertThat(live.body()).isEqualTo("ok\n");

        HttpResponse<String> metrics = get(plugin, "/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body())
            .contains("deviceplugin4j_")
            .contains("resource=\"" + SERIAL + "\"")
            .contains("resource=\"" + NIC + "\"");
        assertThat(get(plugin, "/nothing").statusCode()).isEqualTo(404);
      }
    }
  }
}
