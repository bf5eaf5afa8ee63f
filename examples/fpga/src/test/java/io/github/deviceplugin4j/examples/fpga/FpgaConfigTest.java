package io.github.deviceplugin4j.examples.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FpgaConfigTest {

  @Test
  void defaultsAreDocumented() {
    FpgaConfig c = FpgaConfig.parse(new String[0], Map.of());

    assertThat(c.root()).isEqualTo(Path.of("/"));
    assertThat(c.mode()).isEqualTo(FpgaConfig.Mode.AF);
    assertThat(c.domain()).isEqualTo("fpga.example.com");
    assertThat(c.pollInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.readyFile()).isEqualTo(Path.of("/tmp/deviceplugin4j.ready"));
    assertThat(c).isEqualTo(FpgaConfig.defaults(Path.of("/")));
  }

  @Test
  void flagsWinOverEnvironmentWhichWinsOverTheFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("fpga.properties");
    Files.writeString(
        file, "mode=region\ndomain=file.example.com\npoll-interval=PT1M\nroot=/file\n");
    Map<String, String> env =
        Map.of(
            "FPGA_CONFIG", file.toString(), "FPGA_DOMAIN", "env.example.com", "FPGA_ROOT", "/env");

    FpgaConfig c = FpgaConfig.parse(new String[] {"--root=/host", "--poll-interval=500ms"}, env);

    assertThat(c.mode()).isEqualTo(FpgaConfig.Mode.REGION);
    assertThat(c.domain()).isEqualTo("env.example.com");
    assertThat(c.root()).isEqualTo(Path.of("/host"));
    assertThat(c.pollInterval()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.resourceName("69528db6eb31577a8c3668f9faa081f6"))
        .isEqualTo("env.example.com/region-69528db6eb31577a8c3668f9faa081f6");
  }

  @Test
  void metricsAddress_isOffByDefault_fromMetricsAddressEnv_andOverriddenByFlag() {
    assertThat(FpgaConfig.parse(new String[0], Map.of()).metricsAddress()).isEmpty();
    assertThat(
            FpgaConfig.parse(new String[0], Map.of("METRICS_ADDRESS", ":9400"))
                .metricsAddress()
                .orElseThrow()
                .getPort())
        .isEqualTo(9400);
    assertThat(
            FpgaConfig.parse(
                    new String[] {"--metrics-address=127.0.0.1:9500"},
                    Map.of("METRICS_ADDRESS", ":9400", "FPGA_METRICS_ADDRESS", ":9401"))
                .metricsAddress())
        .contains(new InetSocketAddress("127.0.0.1", 9500));
    assertThatThrownBy(() -> FpgaConfig.parse(new String[] {"--metrics-address=9400"}, Map.of()))
        .hasMessageContaining("metrics-address must be [host]:port");
  }

  @Test
  void badValuesAreNamed() {
    assertThatThrownBy(() -> FpgaConfig.parse(new String[] {"--mode=fast"}, Map.of()))
        .hasMessageContaining("'--mode': expected one of [AF, REGION] (case-insensitive)");
    assertThatThrownBy(() -> FpgaConfig.parse(new String[] {"--colour=red"}, Map.of()))
        .hasMessageContaining("Unknown option: '--colour=red'");
    assertThatThrownBy(() -> FpgaConfig.parse(new String[] {"--poll-interval=soon"}, Map.of()))
        .hasMessageContaining("'--poll-interval': 'soon' is not a duration");
    assertThatThrownBy(() -> FpgaConfig.parse(new String[] {"--poll-interval=0s"}, Map.of()))
        .hasMessageContaining("'0s' is not a positive duration");
    assertThatThrownBy(() -> FpgaConfig.parse(new String[] {"verbose"}, Map.of()))
        .hasMessageContaining("Unmatched argument at index 0: 'verbose'");
  }

  @Test
  void unknownKeyInTheFileIsNamed(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("fpga.properties");
    Files.writeString(file, "moed=af\n");

    assertThatThrownBy(() -> FpgaConfig.parse(new String[] {"--config=" + file}, Map.of()))
        .hasMessageContaining("unknown key 'moed' in " + file)
        .hasMessageContaining("known: domain, metrics-address, mode, poll-interval");
  }
}
