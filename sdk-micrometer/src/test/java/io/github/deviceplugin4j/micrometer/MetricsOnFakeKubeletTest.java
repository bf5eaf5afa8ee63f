package io.github.deviceplugin4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The meters a real plugin produces, scraped as Prometheus text, with the fake kubelet. */
class MetricsOnFakeKubeletTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/fpga";
  private static final String TAG = "resource=\"" + RESOURCE + "\"";

  @TempDir Path dir;

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final DevicePluginMetrics metrics = DevicePluginMetrics.of(registry);
  private final PrometheusMetricsSource source = PrometheusMetricsSource.of(registry);

  /** Four ports; a test turns some unhealthy through the sink, as a watching backend would. */
  static final class Ports implements DeviceBackend {
    private volatile DeviceSink sink;

    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return list(Set.of());
    }

    @Override
    public void start(DeviceSink sink) {
      this.sink = sink;
    }

    void unhealthy(Set<String> ids) {
      sink.publish(list(ids));
    }

    private static List<Device> list(Set<String> unhealthy) {
      return IntStream.range(0, 4)
          .mapToObj(i -> "port" + i)
          .map(id -> Device.builder(id).health(Health.of(!unhealthy.contains(id))).build())
          .toList();
    }
  }

  private DevicePluginHost start(DeviceBackend backend) {
    DevicePluginHost.Builder host =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(backend);
    return metrics.bindTo(host).start();
  }

  @Test
  void allocationsAndAHealthChange_showInTheScrapedText() {
    Ports ports = new Ports();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = start(ports)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      kubelet.allocate(RESOURCE, 1);
      kubelet.allocate(RESOURCE, 2);
      assertThatThrownBy(() -> kubelet.allocate(RESOURCE, "port9"))
          .isInstanceOf(AllocationException.class);
      ports.unhealthy(Set.of("port3"));
      kubelet.awaitDevices(RESOURCE, d -> d.stream().filter(s -> !s.healthy()).count() == 1, WAIT);

      await()
          .atMost(WAIT)
          .untilAsserted(
              () ->
                  assertThat(scrape())
                      .contains(
                          "deviceplugin4j_rpc_seconds_count{code=\"OK\",method=\"Allocate\","
                              + TAG
                              + "} 2")
                      .contains(
                          "deviceplugin4j_rpc_seconds_count{code=\"INVALID_ARGUMENT\","
                              + "method=\"Allocate\","
                              + TAG
                              + "} 1")
                      .contains(
                          "deviceplugin4j_devices_requested_total{method=\"Allocate\","
                              + TAG
                              + "} 4")
                      .contains("deviceplugin4j_devices{health=\"healthy\"," + TAG + "} 3")
                      .contains("deviceplugin4j_devices{health=\"unhealthy\"," + TAG + "} 1")
                      .contains("deviceplugin4j_registered{" + TAG + "} 1")
                      .contains("deviceplugin4j_streams_open{" + TAG + "} 1")
                      .contains(
                          "deviceplugin4j_registration_seconds_count{mode=\"legacy\","
                              + "outcome=\"success\","
                              + TAG
                              + "} 1")
                      .contains("deviceplugin4j_discovery_seconds_count{outcome=\"success\"," + TAG)
                      .contains("deviceplugin4j_device_list_sent_bytes_count{" + TAG)
                      .doesNotContain("deviceplugin4j_reregistrations_total"));
    }
  }

  @Test
  void kubeletRestart_countsAReRegistrationAndTheEndedStream() {
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = start(new Ports())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      var restarted = kubelet.restart();
      kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
      kubelet.awaitDevices(RESOURCE, d -> d.stream().allMatch(DeviceState::healthy), WAIT);

      await()
          .atMost(WAIT)
          .untilAsserted(
              () ->
                  assertThat(scrape())
                      .contains(
                          "deviceplugin4j_reregistrations_total{mode=\"legacy\"," + TAG + "} 1")
                      .contains(
                          "deviceplugin4j_streams_ended_total{code=\"CANCELLED\"," + TAG + "} 1")
                      .contains("deviceplugin4j_registered{" + TAG + "} 1")
                      .contains("deviceplugin4j_streams_open{" + TAG + "} 1"));
    }
    assertThat(scrape()).contains("deviceplugin4j_registered{" + TAG + "} 0");
  }

  @Test
  void hostEndpoint_servesTheScrapeOverHttp_inTheFormatTheAcceptHeaderAsksFor() throws Exception {
    Ports ports = new Ports();
    DevicePluginHost.Builder builder =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(ports)
            .httpEndpoint(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .metricsSource(source);
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = metrics.bindTo(builder).start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      kubelet.allocate(RESOURCE, 2);
      ports.unhealthy(Set.of("port0", "port1"));
      kubelet.awaitDevices(RESOURCE, d -> d.stream().filter(s -> !s.healthy()).count() == 2, WAIT);
      URI uri = URI.create("http://" + hostPort(host.httpAddress().orElseThrow()) + "/metrics");
      HttpClient http = HttpClient.newHttpClient();

      await()
          .atMost(WAIT)
          .untilAsserted(
              () -> {
                HttpResponse<String> text =
                    http.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString());
                assertThat(text.statusCode()).isEqualTo(200);
                assertThat(text.headers().firstValue("Content-Type"))
                    .contains(PrometheusMetricsSource.TEXT);
                assertThat(text.body())
                    .contains(
                        "deviceplugin4j_rpc_seconds_count{code=\"OK\",method=\"Allocate\","
                            + TAG
                            + "} 1")
                    .contains("deviceplugin4j_devices{health=\"unhealthy\"," + TAG + "} 2")
                    .contains("deviceplugin4j_devices{health=\"healthy\"," + TAG + "} 2")
                    .contains("deviceplugin4j_registered{" + TAG + "} 1");
              });
      HttpResponse<String> open =
          http.send(
              HttpRequest.newBuilder(uri)
                  .header("Accept", "application/openmetrics-text; version=1.0.0")
                  .build(),
              BodyHandlers.ofString());
      assertThat(open.statusCode()).isEqualTo(200);
      assertThat(open.headers().firstValue("Content-Type"))
          .contains(PrometheusMetricsSource.OPENMETRICS);
      assertThat(open.body())
          .contains("deviceplugin4j_registered{" + TAG + "} 1")
          .endsWith("# EOF\n");
    }
  }

  private static String hostPort(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  private String scrape() {
    try {
      var out = new ByteArrayOutputStream();
      source.scrape("", out);
      return out.toString(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
