package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.core.internal.requests.V1Beta1Adapter;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.RegisterAttempt;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Registration in every mode, re-registration on every signal, version negotiation. */
class RegistrationTest {

  private static final String RESOURCE = "example.com/dev";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final RecordingListener listener = new RecordingListener();

  @AfterEach
  void close() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    TestSupport.awaitNoCoreThreads();
  }

  private Path pluginDir() {
    return tmp.resolve("dp");
  }

  private Path registryDir() {
    return tmp.resolve("reg");
  }

  private FakeKubelet kubelet(UnaryOperator<FakeKubelet.Builder> more) {
    FakeKubelet k = more.apply(FakeKubelet.builder().pluginDir(pluginDir())).start();
    closeables.add(k);
    return k;
  }

  private DevicePluginHost host(
      RegistrationMode mode,
      UnaryOperator<DevicePluginHost.Builder> more,
      DeviceBackend... backends) {
    DevicePluginHost.Builder b =
        DevicePluginHost.builder()
            .pluginDir(pluginDir())
            .registryDir(registryDir())
            .registrationMode(mode)
            .listener(listener);
    for (DeviceBackend backend : backends) {
      b.backend(backend);
    }
    DevicePluginHost h = more.apply(b).start();
    closeables.add(h);
    return h;
  }

  @Test
  void legacy_registersWithTheKubeletAndServesItsDevices() {
    FakeKubelet kubelet = kubelet(b -> b);
    DevicePluginHost host =
        host(RegistrationMode.LEGACY, b -> b, TestBackend.of(RESOURCE, "d0", "d1"));

    Registration r = kubelet.awaitRegistration(RESOURCE, WAIT);
    assertThat(r.mode()).isEqualTo(Registration.Mode.LEGACY);
    assertThat(r.version()).isEqualTo("v1beta1");
    assertThat(r.endpoint()).isEqualTo(pluginDir().resolve("example.com_dev.sock").toString());
    assertThat(r.preStartRequired()).isFalse();
    assertThat(r.preferredAllocationAvailable()).isFalse();
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
    assertThat(kubelet.allocatable(RESOURCE)).isEqualTo(2);

    await().atMost(WAIT).until(host::isReady);
    ResourceStatus status = host.status(RESOURCE);
    assertThat(status.registered()).isTrue();
    assertThat(status.registrations()).isEqualTo(1);
    assertThat(status.lastRegistered()).isNotNull();
    assertThat(status.mode()).isEqualTo(RegistrationMode.LEGACY);
    assertThat(listener.events).contains("registered example.com/dev LEGACY");
    // the plugin served before it registered: the kubelet could dial it during Register
    assertThat(kubelet.registerAttempts()).allMatch(RegisterAttempt::accepted);
  }

  @Test
  void legacy_advertisesTheOptionsItsCapabilitiesImply() {
    FakeKubelet kubelet = kubelet(b -> b);
    host(
        RegistrationMode.LEGACY,
        b -> b,
        new DevicePluginServiceTest.RecordingBackend(List.of(Device.healthy("d0"))));
    Registration r = kubelet.awaitRegistration(RESOURCE, WAIT);
    assertThat(r.preStartRequired()).isTrue();
    assertThat(r.preferredAllocationAvailable()).isTrue();
  }

  @Test
  void pluginWatcher_registersThroughTheRegistrySocket() throws Exception {
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()));
    DevicePluginHost host =
        host(RegistrationMode.PLUGIN_WATCHER, b -> b, TestBackend.of(RESOURCE, "d0"));

    Registration r = kubelet.awaitRegistration(RESOURCE, WAIT);
    assertThat(r.mode()).isEqualTo(Registration.Mode.PLUGIN_WATCHER);
    assertThat(r.version()).isEqualTo("v1beta1");
    assertThat(r.endpoint()).isEqualTo(registryDir().resolve("example.com_dev.sock").toString());
    assertThat(TestSupport.permissions(registryDir().resolve("example.com_dev.sock")))
        .isEqualTo("rw-------");
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
    await().atMost(WAIT).until(host::isReady);
    assertThat(host.status(RESOURCE).mode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
    assertThat(listener.events).contains("registered example.com/dev PLUGIN_WATCHER");
    assertThat(kubelet.registerAttempts()).isEmpty();
  }

  @Test
  void auto_choosesThePluginWatcherWhenTheRegistryExistsAndLegacyOtherwise() throws Exception {
    FakeKubelet withRegistry = kubelet(b -> b.registryDir(registryDir()));
    DevicePluginHost host = host(RegistrationMode.AUTO, b -> b, TestBackend.of(RESOURCE, "d0"));
    assertThat(withRegistry.awaitRegistration(RESOURCE, WAIT).mode())
        .isEqualTo(Registration.Mode.PLUGIN_WATCHER);
    assertThat(host.registrationMode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
    host.close();
    withRegistry.close();

    Path legacyDir = Files.createDirectories(tmp.resolve("dp2"));
    FakeKubelet legacy = FakeKubelet.start(legacyDir);
    closeables.add(legacy);
    DevicePluginHost legacyHost =
        DevicePluginHost.builder()
            .pluginDir(legacyDir)
            .registryDir(tmp.resolve("none"))
            .backend(TestBackend.of(RESOURCE, "d0"))
            .start();
    closeables.add(legacyHost);
    assertThat(legacy.awaitRegistration(RESOURCE, WAIT).mode()).isEqualTo(Registration.Mode.LEGACY);
    assertThat(legacyHost.registrationMode()).isEqualTo(RegistrationMode.LEGACY);
  }

  @Test
  void legacy_reRegistersAfterAKubeletRestart() {
    FakeKubelet kubelet = kubelet(b -> b);
    DevicePluginHost host = host(RegistrationMode.LEGACY, b -> b, TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    // The kubelet counts a registration when it has dialled back, before Register returns: wait
    // for the plugin to see the answer too, or the restart below would cancel it mid-flight.
    await().atMost(WAIT).until(host::isReady);

    for (int i = 1; i <= 3; i++) {
      Mark restarted = kubelet.restart();
      kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
      await()
          .atMost(WAIT)
          .until(
              () -> {
                ResourceStatus s = host.status(RESOURCE);
                return s.registered() && !s.lastRegistered().isBefore(restarted.time());
              });
    }
    assertThat(host.status(RESOURCE).registrations()).isGreaterThanOrEqualTo(4);
    assertThat(listener.events).contains("registered example.com/dev LEGACY again");
    assertThat(kubelet.allocate(RESOURCE, 1).deviceIds()).containsExactly("d0");
    // it always served before it registered
    assertThat(kubelet.events())
        .noneMatch(
            e -> e.kind() == io.github.deviceplugin4j.testkit.KubeletEvent.Kind.ENDPOINT_NOT_READY);
  }

  @Test
  void legacy_reRegistersWhenOnlyItsOwnSocketIsDeleted() throws Exception {
    FakeKubelet kubelet = kubelet(b -> b);
    DevicePluginHost host = host(RegistrationMode.LEGACY, b -> b, TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Path socket = host.status(RESOURCE).socket();

    Mark deleted = kubelet.mark();
    Files.delete(socket);

    kubelet.awaitRegistration(RESOURCE, deleted, WAIT);
    assertThat(TestSupport.isSocket(socket)).isTrue();
    assertThat(TestSupport.permissions(socket)).isEqualTo("rw-------");
    await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() == 2);
    assertThat(listener.events).contains("lost example.com/dev");
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
  }

  @Test
  void legacy_reRegistersWhenOnlyKubeletSockIsCreatedAgain() throws Exception {
    FakeKubelet kubelet = kubelet(b -> b);
    DevicePluginHost host = host(RegistrationMode.LEGACY, b -> b, TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Path socket = host.status(RESOURCE).socket();
    Object inode = Files.getAttribute(socket, "unix:ino");

    // kubelet.sock disappears and appears again; the plugin's own socket is untouched
    Path aside = pluginDir().resolve(".kubelet.sock.aside");
    Mark moved = kubelet.mark();
    Files.move(kubelet.kubeletSocket(), aside, StandardCopyOption.ATOMIC_MOVE);
    Files.move(aside, kubelet.kubeletSocket(), StandardCopyOption.ATOMIC_MOVE);

    kubelet.awaitRegistration(RESOURCE, moved, WAIT);
    await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() == 2);
    assertThat(Files.getAttribute(socket, "unix:ino")).isEqualTo(inode);
  }

  @Test
  void legacy_registersAsSoonAsAnAbsentKubeletAppears() throws Exception {
    Files.createDirectories(pluginDir());
    DevicePluginHost host = host(RegistrationMode.LEGACY, b -> b, TestBackend.of(RESOURCE, "d0"));
    await()
        .atMost(WAIT)
        .until(
            () -> host.status(RESOURCE).lastError().orElse(""),
            e -> e.contains("waiting for the kubelet"));
    assertThat(host.isReady()).isFalse();

    // the kubelet starts: it deletes every socket in the directory, then serves kubelet.sock
    FakeKubelet kubelet = kubelet(b -> b);
    Registration r = kubelet.awaitRegistration(RESOURCE, WAIT);
    assertThat(r.mode()).isEqualTo(Registration.Mode.LEGACY);
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1, WAIT);
    await().atMost(WAIT).until(host::isReady);
    assertThat(listener.errors).isEmpty(); // waiting is not an error
  }

  @Test
  void legacy_retriesARefusedVersionWithTheNextOne() {
    FakeKubelet kubelet = kubelet(b -> b);
    host(
        RegistrationMode.LEGACY,
        b -> b.apiAdapters(List.of(new V1Beta1Adapter("v1beta9"), new V1Beta1Adapter("v1beta1"))),
        TestBackend.of(RESOURCE, "d0"));

    Registration r = kubelet.awaitRegistration(RESOURCE, WAIT);
    assertThat(r.version()).isEqualTo("v1beta1");
    await().atMost(WAIT).until(() -> kubelet.registerAttempts().size() == 2);
    assertThat(kubelet.registerAttempts())
        .extracting(a -> a.version() + " " + a.accepted())
        .containsExactly("v1beta9 false", "v1beta1 true");
  }

  @Test
  void legacy_noCommonVersionIsOneClearErrorAndRetriesGoOn() {
    FakeKubelet kubelet = kubelet(b -> b.supportedVersions("v2"));
    DevicePluginHost host =
        host(
            RegistrationMode.LEGACY,
            b -> b.registrationBackoff(Duration.ofMillis(10), Duration.ofMillis(50)),
            TestBackend.of(RESOURCE, "d0"));

    await().atMost(WAIT).until(() -> !listener.errors.isEmpty());
    RegistrationException e = (RegistrationException) listener.errors.get(0);
    assertThat(e.kubeletVersions()).containsExactly("v2");
    assertThat(e.sdkVersions()).containsExactly("v1beta1");
    assertThat(e.getMessage())
        .contains("the kubelet supports [v2], this SDK speaks [v1beta1]")
        .contains("upgrade");
    assertThat(host.status(RESOURCE).lastError().orElseThrow()).contains("[v2]");
    assertThat(host.isReady()).isFalse();
    await().atMost(WAIT).until(() -> kubelet.registerAttempts().size() >= 3);
  }

  @Test
  void pluginWatcher_offersEverySdkVersionAndReportsARefusal() {
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()).supportedVersions("v2"));
    DevicePluginHost host =
        host(RegistrationMode.PLUGIN_WATCHER, b -> b, TestBackend.of(RESOURCE, "d0"));
    await().atMost(WAIT).until(() -> !listener.errors.isEmpty());
    assertThat(listener.errors.get(0)).isInstanceOf(RegistrationException.class);
    assertThat(listener.errors.get(0).getMessage()).contains("v1beta1");
    assertThat(host.isReady()).isFalse();
    assertThat(kubelet.registrations()).isEmpty();
  }

  @Test
  void pluginWatcher_isDiscoveredAgainAfterAKubeletRestart() {
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()));
    DevicePluginHost host =
        host(RegistrationMode.PLUGIN_WATCHER, b -> b, TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Mark restarted = kubelet.restart();
    kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
    await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() == 2);
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
  }

  @Test
  void pluginWatcher_reRegistersWhenItsSocketIsDeleted() throws Exception {
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()));
    DevicePluginHost host =
        host(RegistrationMode.PLUGIN_WATCHER, b -> b, TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Mark deleted = kubelet.mark();
    Files.delete(host.status(RESOURCE).socket());
    kubelet.awaitRegistration(RESOURCE, deleted, WAIT);
    await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() == 2);
  }

  @Test
  void pluginWatcher_needsOnlyTheRegistryDirectory() {
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()));
    DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(tmp.resolve("not-mounted"))
            .registryDir(registryDir())
            .registrationMode(RegistrationMode.PLUGIN_WATCHER)
            .backend(TestBackend.of(RESOURCE, "d0"))
            .start();
    closeables.add(host);
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
  }

  @Test
  void pluginWatcher_isDiscoveredWhenTheKubeletStartsLater() throws Exception {
    Files.createDirectories(pluginDir());
    Files.createDirectories(registryDir());
    DevicePluginHost host =
        host(RegistrationMode.PLUGIN_WATCHER, b -> b, TestBackend.of(RESOURCE, "d0"));
    assertThat(host.isReady()).isFalse();
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()));
    assertThat(kubelet.awaitRegistration(RESOURCE, WAIT).mode())
        .isEqualTo(Registration.Mode.PLUGIN_WATCHER);
    await().atMost(WAIT).until(host::isReady);
  }

  @Test
  void pluginWatcher_recreatesItsSocketWhenARunningKubeletDoesNotPickItUp() throws Exception {
    // the kubelet watches another directory, so it never finds the plugin's socket
    kubelet(b -> b.registryDir(tmp.resolve("elsewhere")));
    Files.createDirectories(registryDir());
    DevicePluginHost host =
        host(
            RegistrationMode.PLUGIN_WATCHER,
            b -> b.reRegistrationDelays(Duration.ofSeconds(5), Duration.ofMillis(100)),
            TestBackend.of(RESOURCE, "d0"));
    Path socket = host.status(RESOURCE).socket();
    Object first = Files.getAttribute(socket, "unix:ino");
    await().atMost(WAIT).until(() -> !first.equals(Files.getAttribute(socket, "unix:ino")));
    assertThat(TestSupport.permissions(socket)).isEqualTo("rw-------");
    assertThat(host.isReady()).isFalse();
  }

  @Test
  void pluginWatcher_healsWhenItsSocketIsDeletedDuringTheRegistration() throws Exception {
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()));
    DevicePluginHost host =
        host(
            RegistrationMode.PLUGIN_WATCHER,
            b -> b.reRegistrationDelays(Duration.ofMillis(300), Duration.ofMillis(300)),
            TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT); // the plugin may not have heard back yet
    Mark deleted = kubelet.mark();
    Files.delete(host.status(RESOURCE).socket());
    kubelet.awaitRegistration(RESOURCE, deleted, WAIT);
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
    await().atMost(WAIT).until(host::isReady);
  }

  @Test
  void reRegistersWhenTheKubeletDropsTheConnectionAndDoesNotComeBack() {
    FakeKubelet kubelet = kubelet(b -> b);
    DevicePluginHost host =
        host(
            RegistrationMode.LEGACY,
            b -> b.reRegistrationDelays(Duration.ofMillis(200), Duration.ofSeconds(10)),
            TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Mark dropped = kubelet.mark();
    kubelet.dropConnection(RESOURCE);
    kubelet.awaitRegistration(RESOURCE, dropped, WAIT);
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 1 && d.get(0).healthy(), WAIT);
    await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() == 2);
  }

  @Test
  void aCancelledStreamThatTheKubeletReopensNeedsNoNewRegistration() {
    FakeKubelet kubelet = kubelet(b -> b);
    TestBackend backend = TestBackend.of(RESOURCE, "d0");
    DevicePluginHost host =
        host(
            RegistrationMode.LEGACY,
            b -> b.reRegistrationDelays(Duration.ofMillis(200), Duration.ofSeconds(10)),
            backend);
    kubelet.awaitRegistration(RESOURCE, WAIT);
    kubelet.cancelListAndWatch(RESOURCE);
    backend.publish(List.of(Device.healthy("d0"), Device.healthy("d1")));
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
    await().atMost(WAIT).until(() -> host.openStreams(RESOURCE) == 1);
    backend.publish(List.of(Device.healthy("d0"), Device.healthy("d1"), Device.healthy("d2")));
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 3, WAIT);
    assertThat(host.status(RESOURCE).registrations()).isEqualTo(1);
  }

  @Test
  void healthFlapsAndRecoversAtTheKubelet() {
    FakeKubelet kubelet = kubelet(b -> b);
    TestBackend backend = TestBackend.of(RESOURCE, "d0", "d1");
    DevicePluginHost host = host(RegistrationMode.LEGACY, b -> b, backend);
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
    for (int i = 0; i < 5; i++) {
      backend.publish(
          List.of(Device.healthy("d0"), Device.healthy("d1").withHealth(Health.UNHEALTHY)));
      kubelet.awaitDevices(RESOURCE, d -> d.stream().filter(s -> s.healthy()).count() == 1, WAIT);
      assertThat(kubelet.capacity(RESOURCE)).isEqualTo(2);
      assertThat(kubelet.allocatable(RESOURCE)).isEqualTo(1);
      backend.publish(List.of(Device.healthy("d0"), Device.healthy("d1")));
      kubelet.awaitDevices(RESOURCE, d -> d.stream().allMatch(s -> s.healthy()), WAIT);
      assertThat(kubelet.allocatable(RESOURCE)).isEqualTo(2);
    }
    await().atMost(WAIT).until(() -> host.status(RESOURCE).healthyDevices() == 2);
    assertThat(listener.events)
        .contains("devices example.com/dev 2/1", "devices example.com/dev 2/2");
  }

  @Test
  void severalResourcesInOneProcessEachHaveTheirOwnSocketAndReRegister() throws Exception {
    FakeKubelet kubelet = kubelet(b -> b);
    DevicePluginHost host =
        host(
            RegistrationMode.LEGACY,
            b -> b,
            TestBackend.of("example.com/a", "a0"),
            TestBackend.of("example.com/b", "b0", "b1"),
            TestBackend.of("example.com/c", "c0"));
    for (String r : List.of("example.com/a", "example.com/b", "example.com/c")) {
      kubelet.awaitRegistration(r, WAIT);
    }
    kubelet.awaitDevices("example.com/b", d -> d.size() == 2, WAIT);
    assertThat(TestSupport.sockets(pluginDir()))
        .extracting(p -> p.getFileName().toString())
        .containsExactly(
            "example.com_a.sock", "example.com_b.sock", "example.com_c.sock", "kubelet.sock");
    assertThat(kubelet.allocate("example.com/b", 2).deviceIds())
        .containsExactlyInAnyOrder("b0", "b1");
    long eventLoopThreads =
        TestSupport.coreThreads().stream().filter(n -> n.contains("eventloop")).count();
    assertThat(eventLoopThreads).isEqualTo(1);

    Mark restarted = kubelet.restart();
    for (String r : List.of("example.com/a", "example.com/b", "example.com/c")) {
      kubelet.awaitRegistration(r, restarted, WAIT);
    }
    await().atMost(WAIT).until(host::isReady);
  }

  @Test
  void shutdownLeavesNoSocketsAndNoThreads() throws Exception {
    java.util.Set<String> baseline = TestSupport.liveThreads();
    FakeKubelet kubelet = kubelet(b -> b.registryDir(registryDir()));
    DevicePluginHost legacy =
        host(RegistrationMode.LEGACY, b -> b, TestBackend.of("example.com/l", "d0"));
    DevicePluginHost watcher =
        host(RegistrationMode.PLUGIN_WATCHER, b -> b, TestBackend.of("example.com/w", "d0"));
    kubelet.awaitRegistration("example.com/l", WAIT);
    kubelet.awaitRegistration("example.com/w", WAIT);

    legacy.close();
    watcher.close();

    assertThat(TestSupport.sockets(pluginDir()))
        .extracting(p -> p.getFileName().toString())
        .containsExactly("kubelet.sock");
    assertThat(TestSupport.sockets(registryDir())).isEmpty();
    TestSupport.awaitNoCoreThreads();
    // the kubelet sees the plugins go: their devices turn unhealthy
    kubelet.awaitDevices("example.com/l", d -> d.stream().noneMatch(s -> s.healthy()), WAIT);
    kubelet.close();
    TestSupport.awaitOnlyThreads(baseline); // gRPC's shared threads included
  }

  @Test
  void recoversWhenThePluginDirectoryIsDeletedAndCreatedAgain() throws Exception {
    FakeKubelet kubelet = kubelet(b -> b);
    DevicePluginHost host =
        host(
            RegistrationMode.LEGACY,
            b -> b.safetyCheckInterval(Duration.ofMillis(200)),
            TestBackend.of(RESOURCE, "d0"));
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);

    // the directory goes away (renamed, then deleted) and a new one appears at the same path
    Path gone = tmp.resolve("gone");
    Files.move(pluginDir(), gone, StandardCopyOption.ATOMIC_MOVE);
    await().atMost(WAIT).until(() -> !host.isReady());
    Files.createDirectories(pluginDir());
    Mark restarted = kubelet.restart();
    try (var files = Files.walk(gone)) { // the lease directory inside too
      for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }

    kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
    await().atMost(WAIT).until(host::isReady);
    assertThat(TestSupport.isSocket(host.status(RESOURCE).socket())).isTrue();
  }
}
