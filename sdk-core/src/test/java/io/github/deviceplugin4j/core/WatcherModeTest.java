package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plugin watcher mode: the kubelet re-discovers an existing registry socket by itself, and
 * re-creating it is a deregistration; AUTO mode falls back to legacy registration once when the
 * plugin watcher never asks for the socket.
 */
class WatcherModeTest {

  private static final String RESOURCE = "example.com/dev";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration QUIET = Duration.ofMillis(1500);

  @TempDir Path tmp;

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private LogCapture log;

  @AfterEach
  void close() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    TestSupport.awaitNoCoreThreads();
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    closeables.add(c);
    return c;
  }

  private Path pluginDir() {
    return tmp.resolve("dp");
  }

  private Path registryDir() {
    return tmp.resolve("reg");
  }

  private FakeKubelet kubelet(Path registryDir) {
    return closeLater(
        FakeKubelet.builder().pluginDir(pluginDir()).registryDir(registryDir).start());
  }

  private DevicePluginHost host(
      RegistrationMode mode, UnaryOperator<DevicePluginHost.Builder> more) {
    log = closeLater(new LogCapture());
    return closeLater(
        more.apply(
                DevicePluginHost.builder()
                    .pluginDir(pluginDir())
                    .registryDir(registryDir())
                    .registrationMode(mode)
                    .backend(TestBackend.of(RESOURCE, "d0")))
            .start());
  }

  private static Object inode(Path socket) throws Exception {
    return Files.getAttribute(socket, "unix:ino");
  }

  private static boolean sameSocket(Path socket, Object inode) {
    try {
      return inode.equals(inode(socket));
    } catch (Exception gone) {
      return false;
    }
  }

  /**
   * Seen on a node: the kubelet down for 8 s, the device plugin directory not mounted, and the
   * plugin re-created its registry socket a dozen times, one INFO line each.
   */
  @Test
  void kubeletOutage_withoutKubeletSockInSight_reCreatesNothingAndLogsOneLineAtEachEnd()
      throws Exception {
    FakeKubelet first = kubelet(registryDir());
    DevicePluginHost host =
        host(
            RegistrationMode.PLUGIN_WATCHER,
            b ->
                b.pluginDir(tmp.resolve("not-mounted"))
                    .reRegistrationDelays(Duration.ofMillis(200), Duration.ofSeconds(5)));
    first.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Path socket = host.status(RESOURCE).socket();
    Object inode = inode(socket);
    int before = host.status(RESOURCE).registrations();

    first.close(); // the kubelet is down; it leaves the registry socket alone
    await().atMost(WAIT).until(() -> !host.isReady()); // noticed by the stream check
    await().during(QUIET).atMost(QUIET.plus(WAIT)).until(() -> sameSocket(socket, inode));

    FakeKubelet second = kubelet(registryDir());
    assertThat(second.awaitRegistration(RESOURCE, WAIT).mode())
        .isEqualTo(Registration.Mode.PLUGIN_WATCHER);
    await()
        .atMost(WAIT)
        .until(() -> host.isReady() && host.status(RESOURCE).registrations() == before + 1);
    assertThat(sameSocket(socket, inode)).as("the same registry socket").isTrue();
    assertThat(log.count(RESOURCE + ": lost the kubelet")).isEqualTo(1);
    assertThat(log.count("with the kubelet again after")).isEqualTo(1);
    assertThat(log.count("re-creating")).isZero();
  }

  /**
   * A rolling update with surge in plugin watcher mode: the second instance serves a registry
   * socket of its own name and registers; the first one, replaced, stops registering; when it
   * closes, the second moves to a fresh socket name, which the plugin watcher registers: one
   * unhealthy window, no socket left but the second's.
   */
  @Test
  void secondInstance_takesOverAndRegistersAgainWhenTheFirstStops() throws Exception {
    FakeKubelet kubelet = kubelet(registryDir());
    DevicePluginHost first = host(RegistrationMode.PLUGIN_WATCHER, b -> b);
    Registration r1 = kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(first::isReady);
    var begin = kubelet.mark();

    DevicePluginHost second =
        closeLater(
            DevicePluginHost.builder()
                .pluginDir(pluginDir())
                .registryDir(registryDir())
                .registrationMode(RegistrationMode.PLUGIN_WATCHER)
                .backend(TestBackend.of(RESOURCE, "d0"))
                .start());
    Path secondSocket = second.status(RESOURCE).socket();
    assertThat(secondSocket).isNotEqualTo(first.status(RESOURCE).socket());
    Registration r2 = kubelet.awaitRegistration(RESOURCE, begin, WAIT);
    assertThat(r2.endpoint()).isEqualTo(secondSocket.toString());
    await().atMost(WAIT).until(() -> second.isReady() && !first.status(RESOURCE).registered());
    assertThat(kubelet.unhealthyWindows(RESOURCE, begin)).isEmpty();

    var stop = kubelet.mark();
    first.close();
    Registration r3 = kubelet.awaitRegistration(RESOURCE, stop, WAIT);
    Path moved = second.status(RESOURCE).socket();
    assertThat(moved).isNotEqualTo(secondSocket);
    assertThat(r3.endpoint()).isEqualTo(moved.toString());
    await()
        .atMost(WAIT)
        .until(
            () ->
                second.isReady()
                    && kubelet.unhealthyWindows(RESOURCE, stop).size() == 1
                    && !kubelet.unhealthyWindows(RESOURCE, stop).get(0).open());
    await()
        .during(QUIET)
        .atMost(QUIET.plus(WAIT))
        .until(() -> kubelet.unhealthyWindows(RESOURCE, stop).size() == 1);
    assertThat(TestSupport.sockets(registryDir())).containsExactly(moved);
    assertThat(r1.endpoint()).isNotEqualTo(r3.endpoint());
  }

  @Test
  void kubeletRestart_reCreatesNoSocket() throws Exception {
    FakeKubelet kubelet = kubelet(registryDir());
    DevicePluginHost host =
        host(
            RegistrationMode.PLUGIN_WATCHER,
            b -> b.reRegistrationDelays(Duration.ofMillis(200), Duration.ofSeconds(5)));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Path socket = host.status(RESOURCE).socket();
    Object inode = inode(socket);
    int before = host.status(RESOURCE).registrations();

    kubelet.restart();

    await()
        .atMost(WAIT)
        .until(() -> host.isReady() && host.status(RESOURCE).registrations() == before + 1);
    await().during(QUIET).atMost(QUIET.plus(WAIT)).until(() -> sameSocket(socket, inode));
    assertThat(log.count("re-creating")).isZero();
    assertThat(log.count("with the kubelet again after")).isEqualTo(1);
  }

  @Test
  void kubeletRestart_theWalkOfTheRegistryFindsThePluginsSocketOnly_notItsStandby()
      throws Exception {
    // The kubelet's plugin watcher walks plugins_registry at start into hidden directories too and
    // skips only dot-named entries (pluginwatcher/plugin_watcher.go, traversePluginDir and
    // handleCreateEvent): a standby socket named "s" in ".dp4jXXXXXXXX/" was registered as a
    // second plugin of the same resource on a real v1.26 kubelet.
    FakeKubelet kubelet = kubelet(registryDir());
    DevicePluginHost host = host(RegistrationMode.PLUGIN_WATCHER, b -> b);
    kubelet.awaitRegistration(RESOURCE, WAIT);
    Path socket = host.status(RESOURCE).socket();
    await() // the standby is bound in the background once the plugin serves
        .atMost(WAIT)
        .ignoreExceptions()
        .until(
            () -> {
              try (Stream<Path> walk = Files.walk(registryDir())) {
                return walk.anyMatch(
                    p ->
                        p.getParent().getFileName().toString().startsWith(".dp4j")
                            && TestSupport.isSocket(p));
              }
            });

    Mark restarted = kubelet.restart();

    // The walk is done when restart() returns: every socket it found is in the log.
    assertThat(kubelet.events(restarted))
        .filteredOn(e -> e.kind() == KubeletEvent.Kind.PLUGIN_DISCOVERED)
        .extracting(KubeletEvent::detail)
        .containsExactly(socket.toString());
    kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
  }

  @Test
  void auto_fallsBackToLegacyOnce_whenThePluginWatcherNeverAsksForTheSocket() throws Exception {
    kubelet(tmp.resolve("elsewhere")); // its plugin watcher looks at another directory
    Files.createDirectories(registryDir());
    FakeKubelet kubelet = (FakeKubelet) closeables.get(0);
    DevicePluginHost host =
        host(
            RegistrationMode.AUTO,
            b ->
                b.pluginWatcherFallback(Duration.ofMillis(800))
                    .reRegistrationDelays(Duration.ofSeconds(5), Duration.ofMillis(200)));
    assertThat(host.status(RESOURCE).mode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
    assertThat(host.registrationMode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);

    Registration r = kubelet.awaitRegistration(RESOURCE, WAIT);

    assertThat(r.mode()).isEqualTo(Registration.Mode.LEGACY);
    await().atMost(WAIT).until(host::isReady);
    ResourceStatus status = host.status(RESOURCE);
    assertThat(status.mode()).isEqualTo(RegistrationMode.LEGACY);
    assertThat(host.registrationMode()).isEqualTo(RegistrationMode.LEGACY);
    assertThat(status.socket().getParent()).isEqualTo(pluginDir());
    assertThat(TestSupport.sockets(registryDir())).isEmpty();
    await()
        .during(QUIET)
        .atMost(QUIET.plus(WAIT))
        .until(() -> host.isReady() && host.status(RESOURCE).registrations() == 1);
    assertThat(log.count("falling back to legacy registration")).isEqualTo(1);
  }

  @Test
  void explicitPluginWatcher_neverFallsBack_andLogsItsKicksRarely() throws Exception {
    FakeKubelet kubelet = kubelet(tmp.resolve("elsewhere"));
    Files.createDirectories(registryDir());
    DevicePluginHost host =
        host(
            RegistrationMode.PLUGIN_WATCHER,
            b ->
                b.pluginWatcherFallback(Duration.ofMillis(100))
                    .reRegistrationDelays(Duration.ofSeconds(5), Duration.ofMillis(50)));
    Path socket = host.status(RESOURCE).socket();
    Object first = inode(socket);
    // the socket is re-created for the watcher more than once: kicks go on, with backoff
    await().atMost(WAIT).until(() -> !sameSocket(socket, first));
    Object second = inode(socket);
    await().atMost(WAIT).until(() -> !sameSocket(socket, second));

    await()
        .during(QUIET)
        .atMost(QUIET.plus(WAIT))
        .until(() -> !host.isReady() && kubelet.registrations().isEmpty());
    assertThat(host.status(RESOURCE).mode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
    assertThat(log.count("falling back")).isZero();
    assertThat(log.count("re-creating " + socket)).isEqualTo(1);
  }
}
