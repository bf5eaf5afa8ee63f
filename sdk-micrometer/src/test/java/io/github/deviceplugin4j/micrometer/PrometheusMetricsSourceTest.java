package io.github.deviceplugin4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.PluginObserver.Method;
import io.github.deviceplugin4j.core.PluginObserver.Rpc;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PrometheusMetricsSourceTest {

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final DevicePluginMetrics metrics = DevicePluginMetrics.of(registry);
  private final PrometheusMetricsSource source = PrometheusMetricsSource.of(registry);

  @Test
  void plainScrape_getsPrometheusTextWithPrefixedNamesAndResourceTag() throws IOException {
    metrics.onRegistered("example.com/fpga", RegistrationMode.LEGACY, false);
    metrics.onDevicesChanged("example.com/fpga", 2, 1);
    metrics.onRpc(new Rpc("example.com/fpga", Method.ALLOCATE, "OK", 1_500_000, 1));

    var out = new ByteArrayOutputStream();
    String type = source.scrape("", out);
    String text = out.toString(StandardCharsets.UTF_8);

    assertThat(type).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
    assertThat(text)
        .contains("deviceplugin4j_registered{resource=\"example.com/fpga\"} 1")
        .contains("deviceplugin4j_devices{health=\"healthy\",resource=\"example.com/fpga\"} 1")
        .contains("deviceplugin4j_devices{health=\"unhealthy\",resource=\"example.com/fpga\"} 1")
        .contains(
            "deviceplugin4j_rpc_seconds_count{code=\"OK\",method=\"Allocate\","
                + "resource=\"example.com/fpga\"} 1")
        .contains(
            "deviceplugin4j_devices_requested_total{method=\"Allocate\","
                + "resource=\"example.com/fpga\"} 1")
        .doesNotContain("# EOF");
  }

  @Test
  void openMetricsAccept_getsOpenMetricsEndingInEof() throws IOException {
    metrics.onRegistered("example.com/fpga", RegistrationMode.LEGACY, false);

    var out = new ByteArrayOutputStream();
    String type =
        source.scrape(
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", out);

    assertThat(type).startsWith("application/openmetrics-text; version=1.0.0");
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("deviceplugin4j_registered{resource=\"example.com/fpga\"} 1")
        .endsWith("# EOF\n");
  }

  @Test
  void protobufAccept_stillGetsText_sinceTheProtobufFormatIsNotShipped() throws IOException {
    var out = new ByteArrayOutputStream();
    String type =
        source.scrape(
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                + "encoding=delimited",
            out);

    assertThat(type).isEqualTo(PrometheusMetricsSource.TEXT);
  }

  @Test
  void percentileHistograms_areOffByDefaultAndOnWhenAsked() throws IOException {
    var withHistograms = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    DevicePluginMetrics.builder(withHistograms)
        .percentileHistograms(true)
        .build()
        .onRpc(new Rpc("example.com/fpga", Method.ALLOCATE, "OK", 1_000_000, 1));
    metrics.onRpc(new Rpc("example.com/fpga", Method.ALLOCATE, "OK", 1_000_000, 1));

    assertThat(scrape(PrometheusMetricsSource.of(withHistograms)))
        .contains("deviceplugin4j_rpc_seconds_bucket{");
    assertThat(scrape(source))
        .contains("deviceplugin4j_rpc_seconds_count{")
        .doesNotContain("_bucket");
  }

  private static String scrape(PrometheusMetricsSource source) throws IOException {
    var out = new ByteArrayOutputStream();
    source.scrape("", out);
    return out.toString(StandardCharsets.UTF_8);
  }
}
