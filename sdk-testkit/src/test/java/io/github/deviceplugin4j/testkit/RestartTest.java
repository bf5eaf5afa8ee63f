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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class RestartTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
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

  @ParameterizedTest
  @EnumSource(KubeletProfile.class)
  void noProfileWritesADeprecationFile(KubeletProfile profile) throws Exception {
    // v1.26.15 and v1.32.10: GetPluginHandler(), the device manager's only writer of DEPRECATION
    // (pkg/kubelet/cm/devicemanager/manager.go), has no caller, so no kubelet of 1.26 or newer
    // writes it; a stub plugin that finds one skips its legacy Register.
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir).profile(profile).start()) {
      assertThat(dir.resolve("DEPRECATION")).doesNotExist();
      kubelet.restart();
      assertThat(dir.resolve("DEPRECATION")).doesNotExist();
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = KubeletProfile.class,
      names = {"V1_26", "V1_27", "V1_32"})
  void upTo1_33EveryNonDirectoryButTheCheckpointIsDeletedOnStart(KubeletProfile profile)
      throws Exception {
    // CleanupPluginDirectory (pkg/kubelet/cm/devicemanager/manager.go) at v1.26.15 and v1.32.10:
    // skips the checkpoint and directories, removes every other entry.
    Files.writeString(dir.resolve("vendor.conf"), "x");
    Files.writeString(dir.resolve("kubelet_internal_checkpoint"), "{}");
    Files.createDirectories(dir.resolve("sub"));
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir).profile(profile).start()) {
      assertThat(dir.resolve("vendor.conf")).doesNotExist();
      assertThat(dir.resolve("kubelet_internal_checkpoint")).hasContent("{}");
      assertThat(dir.resolve("sub")).isDirectory();
      Files.writeString(dir.resolve("later.conf"), "y");
      kubelet.restart();
      assertThat(dir.resolve("later.conf")).doesNotExist();
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = KubeletProfile.class,
      names = {"V1_34", "LATEST"})
  void theNewestCodeDeletesOnlySocketsOnStart(KubeletProfile profile) throws Exception {
    // The newest CleanupPluginDirectory skips directories and every entry that is not a socket.
    Files.writeString(dir.resolve("vendor.conf"), "x");
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir).profile(profile).start()) {
      assertThat(dir.resolve("vendor.conf")).hasContent("x");
      kubelet.restart();
      assertThat(dir.resolve("vendor.conf")).hasContent("x");
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
