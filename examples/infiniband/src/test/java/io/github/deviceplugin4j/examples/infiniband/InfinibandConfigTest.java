package io.github.deviceplugin4j.examples.infiniband;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InfinibandConfigTest {

  @Test
  void defaultsAreExclusiveOnEveryHca() {
    InfinibandConfig c = InfinibandConfig.parse(new String[0], Map.of());

    assertThat(c).isEqualTo(InfinibandConfig.exclusive(Path.of("/")));
    assertThat(c.resourceName()).isEqualTo("rdma.example.com/hca");
    assertThat(c.slots()).isEqualTo(1);
    assertThat(c.hcas()).isEmpty();
    assertThat(c.pollInterval()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void sharedModeHasSlotsAndItsOwnResourceName() {
    InfinibandConfig c =
        InfinibandConfig.parse(
            new String[] {"--mode=shared", "--hcas=mlx5_0, mlx5_1"}, Map.of("IB_SLOTS", "16"));

    assertThat(c.mode()).isEqualTo(InfinibandConfig.Mode.SHARED);
    assertThat(c.slots()).isEqualTo(16);
    assertThat(c.resourceName()).isEqualTo("rdma.example.com/hca_shared");
    assertThat(c.hcas()).isEqualTo(List.of("mlx5_0", "mlx5_1"));
    assertThat(InfinibandConfig.parse(new String[] {"--mode=shared"}, Map.of()).slots())
        .isEqualTo(8);
  }

  @Test
  void mistakesAreNamed() {
    assertThatThrownBy(() -> InfinibandConfig.parse(new String[] {"--mode=split"}, Map.of()))
        .hasMessageContaining("'--mode': expected one of [EXCLUSIVE, SHARED] (case-insensitive)");
    assertThatThrownBy(() -> InfinibandConfig.parse(new String[] {"--slots=4"}, Map.of()))
        .hasMessageContaining("slots only applies to shared mode");
    assertThatThrownBy(
            () -> InfinibandConfig.parse(new String[] {"--mode=shared", "--slots=0"}, Map.of()))
        .hasMessageContaining("slots must be between 1 and 1000");
    assertThatThrownBy(
            () -> InfinibandConfig.parse(new String[] {"--mode=shared", "--slots=x"}, Map.of()))
        .hasMessageContaining("'--slots': 'x' is not an int");
  }
}
