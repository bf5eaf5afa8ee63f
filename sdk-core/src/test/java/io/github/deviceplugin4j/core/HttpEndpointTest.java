package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded HTTP endpoint, over real HTTP. */
class HttpEndpointTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/gpu";
  private static final InetSocketAddress ANY_PORT =
      new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

  @TempDir Path dir;

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(WAIT).build();

  private DevicePluginHost.Builder builder() {
    return DevicePluginHost.builder()
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(TestBackend.of(RESOURCE, "gpu0"))
        .httpEndpoint(ANY_PORT);
  }

  private HttpResponse<String> send(DevicePluginHost host, String method, String path)
      throws IOException, InterruptedException {
    InetSocketAddress a = host.httpAddress().orElseThrow();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.getPort() + path))
            .timeout(WAIT)
            .method(method, HttpRequest.BodyPublishers.noBody())
            .header("Accept", "text/plain")
            .build();
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(DevicePluginHost host, String path) throws Exception {
    return send(host, "GET", path);
  }

  @Test
  void probesAnswer503NamingTheResource_then200OnceRegistered_andMetricsServeTheSource()
      throws Exception {
    MetricsSource source =
        (accept, out) -> {
          out.write(("plugin_up 1 # accept=" + accept + "\n").getBytes(StandardCharsets.UTF_8));
          return "text/plain; version=0.0.4; charset=utf-8";
        };
    try (DevicePluginHost host = builder().metricsSource(source).start()) {
      HttpResponse<String> notReady = get(host, "/readyz");
      assertThat(notReady.statusCode()).isEqualTo(503);
      assertThat(notReady.body()).isEqualTo("example.com/gpu is not registered with the kubelet\n");

      try (FakeKubelet kubelet = FakeKubelet.start(dir)) {
        kubelet.awaitRegistration(RESOURCE, WAIT);
        await().atMost(WAIT).until(() -> get(host, "/readyz").statusCode() == 200);
        assertThat(get(host, "/readyz").body()).isEqualTo("ok\n");
        HttpResponse<String> live = get(host, "/healthz");
        assertThat(live.statusCode()).isEqualTo(200);
        assertThat(live.body()).isEqualTo("ok\n");

        HttpResponse<String> metrics = get(host, "/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type"))
            .hasValue("text/plain; version=0.0.4; charset=utf-8");
        assertThat(metrics.body()).isEqualTo("plugin_up 1 # accept=text/plain\n");

        HttpResponse<String> head = send(host, "HEAD", "/healthz");
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
      }
    }
  }

  @Test
  void healthz_answers503NamingTheBlockedControlLoop_andRecovers() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    PluginListener blocking =
        new PluginListener() {
          @Override
          public void onRegistered(String resource, RegistrationMode mode, boolean again) {
            entered.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            builder().listener(blocking).livenessBound(Duration.ofMillis(300)).start()) {
      await().atMost(WAIT).until(() -> entered.getCount() == 0);

      HttpResponse<String> stuck = get(host, "/healthz");
      assertThat(stuck.statusCode()).isEqualTo(503);
      assertThat(stuck.body())
          .startsWith("control loop of example.com/gpu")
          .contains("did not run a task within 300 ms")
          .doesNotContain("Exception");

      release.countDown();
      await().atMost(WAIT).until(() -> get(host, "/healthz").statusCode() == 200);
    }
  }

  /**
   * An Error escaping a host thread: /healthz answers 503 naming it (and stays up to say so), the
   * host stops serving, awaitClose() returns and failure() names the cause.
   */
  @Test
  void afterAFatalError_healthzAnswers503_theSocketIsRemoved_andAwaitCloseReturns()
      throws Exception {
    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new SigtermMain.FailsOnRescan(RESOURCE))
            .httpEndpoint(ANY_PORT)
            .start()) {
      Path socket = host.status(RESOURCE).socket();
      await().atMost(WAIT).until(() -> host.failure().isPresent());
      assertThat(host.failure().orElseThrow())
          .isInstanceOf(OutOfMemoryError.class)
          .hasMessageContaining("simulated by the test");
      HttpResponse<String> live = get(host, "/healthz");
      assertThat(live.statusCode()).isEqualTo(503);
      assertThat(live.body())
          .startsWith("fatal failure, the plugin stops: java.lang.OutOfMemoryError");
      java.util.concurrent.CompletableFuture<Void> closed =
          java.util.concurrent.CompletableFuture.runAsync(
              () -> {
                try {
                  host.awaitClose();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      closed.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
      await().atMost(WAIT).until(() -> !java.nio.file.Files.exists(socket));
    }
  }

  @Test
  void unknownPathsAndMethods_get404And405_andAFailingSourceA500_neverAStackTrace()
      throws Exception {
    MetricsSource broken =
        (accept, out) -> {
          throw new IllegalStateException("registry closed");
        };
    try (DevicePluginHost host = builder().metricsSource(broken).start()) {
      HttpResponse<String> unknown = get(host, "/admin/../etc/passwd");
      assertThat(unknown.statusCode()).isEqualTo(404);
      assertThat(unknown.body()).isEqualTo("not found: try /healthz, /readyz or /metrics\n");

      HttpResponse<String> post = send(host, "POST", "/healthz");
      assertThat(post.statusCode()).isEqualTo(405);
      assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
      assertThat(post.body()).isEqualTo("method POST not allowed; use GET or HEAD\n");

      HttpResponse<String> failed = get(host, "/metrics");
      assertThat(failed.statusCode()).isEqualTo(500);
      assertThat(failed.body()).isEqualTo("metrics unavailable\n");

      // still serving after all that
      assertThat(get(host, "/readyz").statusCode()).isEqualTo(503);
    }
  }

  @Test
  void metricsWithoutASource_is404() throws Exception {
    try (DevicePluginHost host = builder().start()) {
      HttpResponse<String> metrics = get(host, "/metrics");
      assertThat(metrics.statusCode()).isEqualTo(404);
      assertThat(metrics.body()).contains("no metrics source configured");
    }
  }

  @Test
  void takenPort_failsStartWithAClearError_andLeavesNoPluginSocket() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      InetSocketAddress address =
          new InetSocketAddress(InetAddress.getLoopbackAddress(), taken.getLocalPort());
      assertThatThrownBy(() -> builder().httpEndpoint(address).start())
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("cannot serve the HTTP endpoint")
          .hasMessageContaining(String.valueOf(taken.getLocalPort()))
          .hasMessageContaining("choose another address");
      assertThat(TestSupport.sockets(dir)).isEmpty();
    }
  }

  @Test
  void metricsSourceWithoutEndpoint_isAConfigurationError() {
    assertThatThrownBy(
            () ->
                DevicePluginHost.builder()
                    .pluginDir(dir)
                    .backend(TestBackend.of(RESOURCE, "gpu0"))
                    .metricsSource((accept, out) -> "text/plain")
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("no httpEndpoint");
  }

  @Test
  void withoutEndpoint_noAddress() {
    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(TestBackend.of(RESOURCE, "gpu0"))
            .start()) {
      assertThat(host.httpAddress()).isEmpty();
    }
  }
}
