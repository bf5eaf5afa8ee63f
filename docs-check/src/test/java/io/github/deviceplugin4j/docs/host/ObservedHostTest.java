package io.github.deviceplugin4j.docs.host;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletExtension;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The observed host of deploying.md answers its probes and counts a failed call. */
class ObservedHostTest {

  @RegisterExtension FakeKubeletExtension extension = FakeKubeletExtension.create();

  @TempDir Path root;

  @Test
  void observedHostAnswersProbesAndCountsAFailedAllocate() throws Exception {
    FakeKubelet kubelet = extension.get();
    Files.createDirectories(root.resolve("dev"));
    Files.createFile(root.resolve("dev/accel0"));
    ObservedHost.FailureCounter failures = new ObservedHost.FailureCounter();
    try (DevicePluginHost host =
        ObservedHost.observed(
                new AccelBackend(root),
                failures,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .start()) {
      kubelet.awaitRegistration(HostTest.RESOURCE, HostTest.WAIT);
      int port = host.httpAddress().orElseThrow().getPort();
      HttpClient http = HttpClient.newHttpClient();
      org.awaitility.Awaitility.await()
          .atMost(HostTest.WAIT)
          .until(
              () ->
                  http.send(
                              HttpRequest.newBuilder(
                                      URI.create("http://127.0.0.1:" + port + "/readyz"))
                                  .timeout(Duration.ofSeconds(10))
                                  .build(),
                              HttpResponse.BodyHandlers.ofString())
                          .statusCode()
                      == 200);

      org.assertj.core.api.Assertions.assertThatThrownBy(
          () -> kubelet.allocate(HostTest.RESOURCE, "no-such-device"));
      org.awaitility.Awaitility.await()
          .atMost(HostTest.WAIT)
          .until(() -> failures.failures.sum() == 1);
      assertThat(host.liveness(Duration.ofSeconds(10)).ok()).isTrue();
    }
  }
}
