package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.testkit.internal.SocketFiles;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RestartTest {
  static final Duration WAIT = Duration.ofSeconds(5);
  static final String RES = "example.com/foo";

  @TempDir Path dir;

  /** A socket file left behind by a process that no longer serves it. */
  private static void staleSocket(Path p) throws Exception {
    try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.bind(UnixDomainSocketAddress.of(p));
    }
  }

  @Test
  void startDeletesSocketFilesButNotDirectoriesOrOtherFiles() throws Exception {
    staleSocket(dir.resolve("stale.sock"));
    Files.writeString(dir.resolve("kubelet_internal_checkpoint"), "{}");
    Files.createDirectories(dir.resolve("subdir"));
    staleSocket(dir.resolve("subdir/nested.sock"));
    assertThat(SocketFiles.isSocket(dir.resolve("stale.sock"))).isTrue();
    try (FakeKubelet kubelet = FakeKubelet.start(dir)) {
      assertThat(dir.resolve("stale.sock")).doesNotExist();
      assertThat(dir.resolve("kubelet_internal_checkpoint")).hasContent("{}");
      assertThat(dir.resolve("subdir")).isDirectory();
      assertThat(SocketFiles.isSocket(dir.resolve("subdir/nested.sock"))).isTrue();
      assertThat(SocketFiles.isSocket(kubelet.kubeletSocket())).isTrue();
    }
  }

  @Test
  void v1_32DeletesEveryRegularFileButTheCheckpointAndWritesNoDeprecationFile() throws Exception {
    // The 1.32 device manager: removeContents keeps only directories and the checkpoint, and
    // nothing calls the function that writes DEPRECATION. The default profile does both the
    // other way.
    Path old = Files.createDirectories(dir.resolve("v132"));
    Path latest = Files.createDirectories(dir.resolve("latest"));
    for (Path d : new Path[] {old, latest}) {
      Files.writeString(d.resolve("vendor.conf"), "x");
      Files.writeString(d.resolve("kubelet_internal_checkpoint"), "{}");
    }
    try (FakeKubelet v132 =
            FakeKubelet.builder().pluginDir(old).profile(KubeletProfile.V1_32).start();
        FakeKubelet newest = FakeKubelet.builder().pluginDir(latest).start()) {
      assertThat(old.resolve("vendor.conf")).doesNotExist();
      assertThat(old.resolve("kubelet_internal_checkpoint")).hasContent("{}");
      assertThat(old.resolve("DEPRECATION")).doesNotExist();
      assertThat(latest.resolve("vendor.conf")).hasContent("x");
      assertThat(latest.resolve("DEPRECATION")).exists();
    }
  }

  @Test
  void kubeletVersionsMapToTheProfileCoveringThem() {
    assertThat(KubeletProfile.forVersion("1.26")).isEqualTo(KubeletProfile.V1_26);
    assertThat(KubeletProfile.forVersion("v1.31")).isEqualTo(KubeletProfile.V1_27);
    assertThat(KubeletProfile.forVersion("1.32")).isEqualTo(KubeletProfile.V1_32);
    assertThat(KubeletProfile.forVersion("1.33")).isEqualTo(KubeletProfile.V1_32);
    assertThat(KubeletProfile.forVersion("1.36")).isEqualTo(KubeletProfile.V1_34);
    assertThat(KubeletProfile.forVersion("1.37")).isEqualTo(KubeletProfile.LATEST);
    assertThat(KubeletProfile.forVersion("latest")).isEqualTo(KubeletProfile.LATEST);
    assertThatThrownBy(() -> KubeletProfile.forVersion("2"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown kubelet version '2'")
        .hasMessageContaining("V1_32 from 1.32");
  }

  /**
   * A fake that sees many restarts and re-registrations (e.g. a long {@code fake-kubelet serve}
   * session, or the reliability soak) used to keep every terminated channel and every cancelled
   * grace-period timer (5 minutes each) in memory.
   */
  @Test
  void manyRestartsRetainNeitherTerminatedChannelsNorCancelledTimers() throws Exception {
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("foo.sock")).devices(TestPlugin.healthyDevices(1))) {
      plugin.start().register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 1, WAIT);
      for (int i = 0; i < 50; i++) {
        Mark restarted = kubelet.restart();
        plugin.start().register(kubelet.kubeletSocket());
        kubelet.awaitRegistration(RES, restarted, WAIT);
      }
      assertThat(kubelet.registrations()).hasSize(51);
      assertThat(kubelet.transport.channels()).as("channels kept").hasSizeLessThanOrEqualTo(3);
      assertThat(
              ((java.util.concurrent.ScheduledThreadPoolExecutor) kubelet.transport.scheduler())
                  .getQueue())
          .as("timers queued")
          .hasSizeLessThanOrEqualTo(2);
    }
  }

  @Test
  void restartDropsPluginsDeletesSocketsAndServesAgain() throws Exception {
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("foo.sock")).devices(TestPlugin.healthyDevices(2))) {
      plugin.start().register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
      Allocation held = kubelet.allocate(RES, 1);
      Files.writeString(dir.resolve("notes.txt"), "keep");
      Files.createDirectories(dir.resolve("d"));

      Mark restarted = kubelet.restart();

      assertThat(dir.resolve("foo.sock")).doesNotExist();
      assertThat(dir.resolve("notes.txt")).hasContent("keep");
      assertThat(dir.resolve("d")).isDirectory();
      assertThat(SocketFiles.isSocket(kubelet.kubeletSocket())).isTrue();
      // Like a kubelet reading its checkpoint: the resource is known, with capacity 0.
      assertThat(kubelet.resources()).contains(RES);
      assertThat(kubelet.capacity(RES)).isZero();
      assertThat(kubelet.allocatable(RES)).isZero();
      assertThat(kubelet.registration(RES)).isEmpty();
      // Allocations survive a restart (the kubelet's checkpoint).
      assertThat(kubelet.allocations()).containsExactly(held);

      // The plugin notices its socket is gone and serves and registers again.
      plugin.start().register(kubelet.kubeletSocket());
      Registration again = kubelet.awaitRegistration(RES, restarted, WAIT);
      assertThat(again.isAfter(restarted)).isTrue();
      kubelet.awaitDevices(RES, l -> l.stream().allMatch(DeviceState::healthy), WAIT);
      assertThat(kubelet.registrations()).hasSize(2);
      assertThat(kubelet.events())
          .filteredOn(e -> e.kind() == KubeletEvent.Kind.RESTART)
          .hasSize(2);
    }
  }

  @Test
  void theExistingRegistrationDoesNotSatisfyAnAwaitAfterRestart() {
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        TestPlugin plugin = new TestPlugin(RES, dir.resolve("foo.sock"))) {
      plugin.start().register(kubelet.kubeletSocket());
      kubelet.awaitRegistration(RES, WAIT);
      Mark restarted = kubelet.restart();
      assertThatThrownBy(() -> kubelet.awaitRegistration(RES, restarted, Duration.ofMillis(100)))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("RESTART");
    }
  }

  /**
   * The plugin re-registers between kubelet.sock being served and restart() returning (a fast
   * plugin, or a loaded machine): the mark restart() returns still sees the registration, where a
   * wait for "a registration at or after the instant restart() returned" misses it.
   */
  @Test
  @SuppressWarnings("removal")
  void aReRegistrationBeforeRestartReturnsIsSeenFromItsMark() {
    TestPlugin plugin = new TestPlugin(RES, dir.resolve("foo.sock"));
    try (FakeKubelet kubelet =
            FakeKubelet.builder()
                .pluginDir(dir)
                .afterRestartServed(k -> plugin.start().register(k.kubeletSocket()))
                .start();
        plugin) {
      plugin.start().register(kubelet.kubeletSocket());
      kubelet.awaitRegistration(RES, WAIT);

      Mark m = kubelet.restart();
      java.time.Instant returned = java.time.Instant.now();

      Registration again = kubelet.awaitRegistration(RES, m, WAIT);
      assertThat(again.isAfter(m)).isTrue();
      assertThat(again.at()).isBefore(returned);
      assertThatThrownBy(
              () -> kubelet.awaitRegistrationAfter(RES, returned, Duration.ofMillis(200)))
          .isInstanceOf(AssertionError.class);
    }
  }

  @Test
  void restartReturnDelayPausesBeforeRestartReturns() {
    try (FakeKubelet kubelet =
        FakeKubelet.builder().pluginDir(dir).restartReturnDelay(Duration.ofMillis(100)).start()) {
      Mark m = kubelet.restart();
      KubeletEvent served =
          kubelet.awaitEvent(
              m, e -> e.kind() == KubeletEvent.Kind.RESTART && e.detail().contains("again"), WAIT);
      assertThat(System.nanoTime() - served.nanos()).isGreaterThanOrEqualTo(100_000_000L);
    }
  }
}
