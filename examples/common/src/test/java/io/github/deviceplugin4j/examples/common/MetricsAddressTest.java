package io.github.deviceplugin4j.examples.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class MetricsAddressTest {

  @Test
  void emptyMeansNoEndpoint() {
    assertThat(MetricsAddress.parse("")).isEmpty();
    assertThat(MetricsAddress.parse("  ")).isEmpty();
    assertThat(MetricsAddress.parse(null)).isEmpty();
  }

  @Test
  void portAloneListensOnEveryInterface() {
    InetSocketAddress a = MetricsAddress.parse(":9400").orElseThrow();

    assertThat(a.getPort()).isEqualTo(9400);
    assertThat(a.getAddress().isAnyLocalAddress()).isTrue();
  }

  @Test
  void hostAndPort_ipv4AndBracketedIpv6() {
    assertThat(MetricsAddress.parse("127.0.0.1:9401").orElseThrow())
        .isEqualTo(new InetSocketAddress("127.0.0.1", 9401));
    assertThat(MetricsAddress.parse("[::1]:9402").orElseThrow())
        .isEqualTo(new InetSocketAddress("::1", 9402));
  }

  @Test
  void malformedValues_nameTheSettingAndTheValue() {
    for (String bad : new String[] {"9400", "host:", ":http", ":70000", "::1:9400"}) {
      assertThatThrownBy(() -> MetricsAddress.parse(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("metrics-address must be [host]:port")
          .hasMessageContaining("'" + bad + "'");
    }
  }
}
