package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The builder's argument checks and what a started fake reports of its settings. */
class BuilderSettingsTest {
  @TempDir Path dir;

  @Test
  void builder_rejectsBadArguments_namingTheSetting() {
    FakeKubelet.Builder b = FakeKubelet.builder();
    assertThatThrownBy(() -> b.gracePeriod(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("gracePeriod must not be negative: PT-1S");
    assertThatThrownBy(() -> b.rpcTimeout(Duration.ofSeconds(-1)))
        .hasMessage("rpcTimeout must not be negative: PT-1S");
    assertThatThrownBy(() -> b.restartReturnDelay(Duration.ofMillis(-1)))
        .hasMessage("restartReturnDelay must not be negative: PT-0.001S");
    assertThatThrownBy(() -> b.draCallTimeout(Duration.ZERO))
        .hasMessage("draCallTimeout must be positive, got PT0S");
    assertThatThrownBy(() -> b.draHealthService("v2.DRAResourceHealth"))
        .hasMessageStartingWith("unknown DRA health service \"v2.DRAResourceHealth\"");
    assertThatThrownBy(b::supportedVersions)
        .hasMessage("supportedVersions needs at least one version");
    assertThatThrownBy(() -> b.profile(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("profile");
    assertThatThrownBy(() -> b.pluginDir(null)).hasMessage("pluginDir");
    assertThatThrownBy(() -> b.eventListener(null)).hasMessage("listener");
  }

  @Test
  void start_withoutPluginDir_saysHowToGiveOne() {
    assertThatThrownBy(() -> FakeKubelet.builder().start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("pluginDir is required: FakeKubelet.builder().pluginDir(dir).start()");
  }

  @Test
  void startedFake_reportsItsSettings_andIgnoresLaterBuilderChanges() {
    FakeKubelet.Builder b =
        FakeKubelet.builder().pluginDir(dir.resolve("dp")).supportedVersions("v1beta1", "v1");
    try (FakeKubelet kubelet = b.start()) {
      b.supportedVersions("v2").pluginDir(dir.resolve("other"));
      assertThat(kubelet.pluginDir()).isEqualTo(dir.resolve("dp").toAbsolutePath());
      assertThat(kubelet.kubeletSocket()).isEqualTo(kubelet.pluginDir().resolve("kubelet.sock"));
      assertThat(kubelet.supportedVersions()).containsExactly("v1beta1", "v1");
      assertThat(kubelet.registryDir()).isEqualTo(Optional.empty());
      assertThat(kubelet.podResourcesSocket()).isEqualTo(Optional.empty());
    }
  }
}
