package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginWatcherTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String RES = "example.com/watched";

  @TempDir Path dir;

  private FakeKubelet kubelet(String... versions) {
    FakeKubelet.Builder b =
        FakeKubelet.builder().pluginDir(dir.resolve("dp")).registryDir(dir.resolve("reg"));
    if (versions.length > 0) {
      b.supportedVersions(versions);
    }
    return b.start();
  }

  private static PluginInfo info(String name, String endpoint, String... versions) {
    return PluginInfo.newBuilder()
        .setType("DevicePlugin")
        .setName(name)
        .setEndpoint(endpoint)
        .addAllSupportedVersions(List.of(versions))
        .build();
  }

  @Test
  void registersAPluginFoundInTheRegistryWithAnEmptyEndpoint() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("reg/watched.sock"))
                .devices(TestPlugin.healthyDevices(2))
                .options(false, true)
                .pluginInfo(info(RES, "", "v1beta1"))
                .start()) {
      Registration r = kubelet.awaitRegistration(RES, WAIT);
      assertThat(r.mode()).isEqualTo(Registration.Mode.PLUGIN_WATCHER);
      assertThat(r.endpoint()).isEqualTo(plugin.socket().toString());
      assertThat(r.version()).isEqualTo("v1beta1");
      assertThat(r.preferredAllocationAvailable()).isTrue();
      kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
      RegistrationStatus status = plugin.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status).isNotNull();
      assertThat(status.getPluginRegistered()).isTrue();
      assertThat(status.getError()).isEmpty();
      assertThat(kubelet.allocate(RES, 1).deviceIds()).hasSize(1);
      assertThat(kubelet.events()).anyMatch(e -> e.kind() == Kind.GET_INFO && !e.failed());
    }
  }

  /**
   * A plugin that misses the 1 s GetInfo deadline (a busy node) is registered on a later attempt,
   * as the kubelet's plugin manager retries: its reconciler every second, held back by the
   * operation executor's exponential backoff (500 ms, then twice as long each time).
   */
  @Test
  void aPluginThatMissesTheGetInfoDeadlineIsRegisteredOnARetry() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("reg/busy.sock"))
                .devices(TestPlugin.healthyDevices(1))
                .pluginInfo(info(RES, "", "v1beta1"))
                .leaveGetInfoUnanswered(2)
                .start()) {
      // Two failed attempts (1 s deadline each) and their retries (1 s, then 1 s) come first.
      Registration r = kubelet.awaitRegistration(RES, Duration.ofSeconds(60));
      assertThat(r.mode()).isEqualTo(Registration.Mode.PLUGIN_WATCHER);
      assertThat(plugin.infoCalls.get()).isEqualTo(3);
      assertThat(kubelet.events())
          .filteredOn(e -> e.kind() == Kind.GET_INFO && e.failed())
          .hasSize(2)
          .allMatch(e -> e.detail().contains("DEADLINE_EXCEEDED"));
      assertThat(kubelet.events())
          .filteredOn(e -> e.detail().startsWith("will retry the registration of"))
          .extracting(KubeletEvent::detail)
          .containsExactly(
              "will retry the registration of " + plugin.socket() + " in 1000 ms",
              "will retry the registration of " + plugin.socket() + " in 1000 ms");
    }
  }

  /** A refused plugin is refused again on each retry, and told each time, as the kubelet does. */
  @Test
  @SuppressWarnings("try") // resources held open for the test's duration
  void aRefusedPluginIsToldAgainOnEachRetry() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            new TestPlugin("bad", dir.resolve("reg/again.sock"))
                .pluginInfo(info("kubernetes.io/gpu", "", "v1beta1"))
                .start()) {
      RegistrationStatus first = plugin.statuses.poll(60, TimeUnit.SECONDS);
      RegistrationStatus second = plugin.statuses.poll(60, TimeUnit.SECONDS);
      assertThat(first).isNotNull();
      assertThat(second).as("a second refusal after the retry").isNotNull();
      assertThat(second.getPluginRegistered()).isFalse();
      assertThat(second.getError()).isEqualTo(first.getError());
      assertThat(kubelet.registrations()).isEmpty();
    }
  }

  /** A plugin whose first GetDevicePluginOptions blocks until released. */
  private static TestPlugin blockingFirstOptions(
      Path socket, CountDownLatch entered, CountDownLatch release) {
    AtomicInteger calls = new AtomicInteger();
    return new TestPlugin(RES, socket)
        .devices(TestPlugin.healthyDevices(1))
        .pluginInfo(info(RES, "", "v1beta1"))
        .optionsAnswer(
            e -> {
              if (calls.getAndIncrement() == 0) {
                entered.countDown();
                try {
                  release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException ie) {
                  Thread.currentThread().interrupt();
                }
              }
              return DevicePluginOptions.getDefaultInstance();
            });
  }

  @Test
  void aRegistrationBegunBeforeARestartIsAbandonedAndTheSocketRegisteredAgain() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            blockingFirstOptions(dir.resolve("reg/slow.sock"), entered, release).start()) {
      assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
      Mark restarted = kubelet.restart();
      release.countDown();

      kubelet.awaitEvent(
          e -> e.kind() == Kind.REGISTER && e.detail().startsWith("abandoned"), WAIT);
      Registration again = kubelet.awaitRegistration(RES, restarted, WAIT);
      kubelet.awaitDevices(RES, l -> l.size() == 1 && l.get(0).healthy(), WAIT);

      assertThat(again.isAfter(restarted)).isTrue();
      RegistrationStatus status = plugin.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status).isNotNull();
      assertThat(status.getPluginRegistered()).isTrue();
      assertThat(plugin.statuses.poll(200, TimeUnit.MILLISECONDS))
          .as("the old kubelet's attempt must not notify the plugin")
          .isNull();
    }
  }

  @Test
  void aSocketRemovedDuringItsRegistrationIsDeregisteredOnceItCompletes() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Path socket = dir.resolve("reg/gone.sock");
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin = blockingFirstOptions(socket, entered, release).start()) {
      assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
      Files.delete(socket);
      kubelet.awaitEvent(e -> e.detail().contains("removed while being registered"), WAIT);
      release.countDown();

      kubelet.awaitEvent(e -> e.kind() == Kind.DEREGISTER && e.resource().equals(RES), WAIT);
      assertThat(kubelet.connectedResources()).doesNotContain(RES);
    }
  }

  @Test
  @SuppressWarnings("try") // resources held open for the test's duration
  void dialsASeparateEndpointWhenGiven() throws Exception {
    Path endpoint = dir.resolve("dp/sep.sock");
    try (FakeKubelet kubelet = kubelet();
        TestPlugin devicePlugin =
            new TestPlugin(RES, endpoint).devices(TestPlugin.healthyDevices(1)).start();
        TestPlugin registrar =
            new TestPlugin(RES, dir.resolve("reg/r.sock"))
                .pluginInfo(info(RES, endpoint.toString(), "v1beta1"))
                .start()) {
      assertThat(kubelet.awaitRegistration(RES, WAIT).endpoint()).isEqualTo(endpoint.toString());
      kubelet.awaitDevices(RES, l -> l.size() == 1, WAIT);
      assertThat(registrar.statuses.poll(5, TimeUnit.SECONDS).getPluginRegistered()).isTrue();
    }
  }

  @Test
  void refusesAPluginWithoutACommonVersionAndTellsIt() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("reg/old.sock"))
                .pluginInfo(info(RES, "", "v1alpha1", "v1beta2"))
                .start()) {
      RegistrationStatus status = plugin.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status).isNotNull();
      assertThat(status.getPluginRegistered()).isFalse();
      assertThat(status.getError())
          .isEqualTo(
              "RegisterPlugin error -- plugin validation failed with err: manager version,"
                  + " v1beta1, is not among plugin supported versions [v1alpha1 v1beta2]");
      assertThat(kubelet.registrations()).isEmpty();
    }
  }

  @Test
  void acceptsWhenAnyOfferedVersionIsSupported() throws Exception {
    try (FakeKubelet kubelet = kubelet("v1beta2", "v1beta1");
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("reg/new.sock"))
                .pluginInfo(info(RES, "", "v1alpha1", "v1beta1"))
                .start()) {
      assertThat(kubelet.awaitRegistration(RES, WAIT).version()).isEqualTo("v1beta1");
      assertThat(plugin.statuses.poll(5, TimeUnit.SECONDS).getPluginRegistered()).isTrue();
    }
  }

  @Test
  @SuppressWarnings("try") // resources held open for the test's duration
  void refusesAnInvalidResourceName() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            new TestPlugin("bad", dir.resolve("reg/bad.sock"))
                .pluginInfo(info("kubernetes.io/gpu", "", "v1beta1"))
                .start()) {
      RegistrationStatus status = plugin.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status.getPluginRegistered()).isFalse();
      assertThat(status.getError())
          .endsWith(
              "invalid name of device plugin socket: the ResourceName \"kubernetes.io/gpu\" is"
                  + " invalid");
    }
  }

  @Test
  @SuppressWarnings("try") // resources held open for the test's duration
  void refusesAnUnknownPluginType() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("reg/t.sock"))
                .pluginInfo(info(RES, "", "v1beta1").toBuilder().setType("GpuPlugin").build())
                .start()) {
      RegistrationStatus status = plugin.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status.getPluginRegistered()).isFalse();
      assertThat(status.getError())
          .startsWith("RegisterPlugin error -- no handler registered for plugin type: GpuPlugin");
    }
  }

  @Test
  void ignoresSocketsWhoseNameStartsWithADot() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin hidden =
            new TestPlugin(RES, dir.resolve("reg/.hidden.sock"))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start();
        TestPlugin visible =
            new TestPlugin("example.com/visible", dir.resolve("reg/visible.sock"))
                .pluginInfo(info("example.com/visible", "", "v1beta1"))
                .start()) {
      // The visible one registers; the hidden one is never even asked for its info.
      kubelet.awaitRegistration("example.com/visible", WAIT);
      assertThat(visible.statuses.poll(5, TimeUnit.SECONDS).getPluginRegistered()).isTrue();
      assertThat(kubelet.events())
          .noneMatch(e -> e.detail().contains(".hidden.sock"))
          .noneMatch(e -> e.resource().equals(RES));
      assertThat(hidden.statuses).isEmpty();
    }
  }

  @Test
  void theWalkAtStartRegistersASocketInAHiddenDirectoryButNoDotNamedSocket() throws Exception {
    // plugin_watcher.go: traversePluginDir (filepath.Walk) descends into ".priv" too, and
    // handleCreateEvent skips an entry only when its own name starts with a dot.
    try (TestPlugin inHiddenDir =
            new TestPlugin("example.com/walked", dir.resolve("reg/.priv/s"))
                .pluginInfo(info("example.com/walked", "", "v1beta1"))
                .start();
        TestPlugin dotNamed =
            new TestPlugin(RES, dir.resolve("reg/.priv2/.s"))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start();
        FakeKubelet kubelet = kubelet()) {
      assertThat(kubelet.events())
          .filteredOn(e -> e.kind() == Kind.PLUGIN_DISCOVERED)
          .extracting(KubeletEvent::detail)
          .containsExactly(dir.resolve("reg/.priv/s").toString());
      kubelet.awaitRegistration("example.com/walked", WAIT);
      assertThat(dotNamed.statuses).isEmpty();
    }
  }

  @Test
  void aHiddenDirectoryCreatedAtRuntimeIsNotWatched() throws Exception {
    // handleCreateEvent: a created entry named ".late" is ignored, so is what appears in it later.
    try (FakeKubelet kubelet = kubelet();
        TestPlugin late =
            new TestPlugin(RES, dir.resolve("reg/.late/s"))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start();
        TestPlugin sentinel =
            new TestPlugin("example.com/visible", dir.resolve("reg/visible.sock"))
                .pluginInfo(info("example.com/visible", "", "v1beta1"))
                .start()) {
      kubelet.awaitRegistration("example.com/visible", WAIT);
      assertThat(kubelet.events())
          .filteredOn(e -> e.kind() == Kind.PLUGIN_DISCOVERED)
          .extracting(KubeletEvent::detail)
          .containsExactly(dir.resolve("reg/visible.sock").toString());
      assertThat(late.statuses).isEmpty();
    }
  }

  @Test
  void findsSocketsThatExistedBeforeStartAndDeregistersOnRemoval() throws Exception {
    try (TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("reg/early.sock"))
                .devices(TestPlugin.healthyDevices(2))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start();
        FakeKubelet kubelet = kubelet()) {
      kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
      plugin.stop(); // deletes the socket
      kubelet.awaitEvent(e -> e.kind() == Kind.DEREGISTER && e.resource().equals(RES), WAIT);
      kubelet.awaitDevices(RES, l -> l.stream().noneMatch(DeviceState::healthy), WAIT);
      assertThat(kubelet.registration(RES)).isEmpty();
      // Serving again is a new registration.
      plugin.start();
      kubelet.awaitDevices(RES, l -> l.stream().allMatch(DeviceState::healthy), WAIT);
      assertThat(kubelet.registrations()).hasSize(2);
    }
  }

  @Test
  void aRestartRediscoversTheRegistrySocketWithoutDeletingIt() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("reg/w.sock"))
                .devices(TestPlugin.healthyDevices(1))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start()) {
      kubelet.awaitRegistration(RES, WAIT);
      kubelet.awaitEvent(e -> e.kind() == Kind.NOTIFY_REGISTRATION_STATUS, WAIT);
      Mark restarted = kubelet.restart();
      assertThat(plugin.socket()).exists();
      Registration again = kubelet.awaitRegistration(RES, restarted, WAIT);
      assertThat(again.mode()).isEqualTo(Registration.Mode.PLUGIN_WATCHER);
      kubelet.awaitDevices(RES, l -> l.size() == 1 && l.get(0).healthy(), WAIT);
      kubelet.awaitEvent(
          restarted,
          e -> e.kind() == Kind.NOTIFY_REGISTRATION_STATUS && e.outcome() == Outcome.OK,
          WAIT);
      assertThat(plugin.statuses.poll(5, TimeUnit.SECONDS).getPluginRegistered()).isTrue();
      assertThat(plugin.statuses.poll(5, TimeUnit.SECONDS).getPluginRegistered()).isTrue();
    }
  }

  /**
   * DeRegisterPlugin for a superseded plugin's socket disconnects that client and calls
   * PluginDisconnected: the resource of the live plugin turns unhealthy and its endpoint stops.
   */
  @Test
  void deletingASupersededRegistrySocketDisconnectsTheResource() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin a =
            new TestPlugin(RES, dir.resolve("reg/a.sock"))
                .devices(TestPlugin.healthyDevices(2))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start()) {
      kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
      Mark before = kubelet.mark();
      try (TestPlugin b =
          new TestPlugin(RES, dir.resolve("reg/b.sock"))
              .devices(TestPlugin.healthyDevices(2))
              .pluginInfo(info(RES, "", "v1beta1"))
              .start()) {
        Registration rb = kubelet.awaitRegistration(RES, before, WAIT);
        assertThat(rb.endpoint()).isEqualTo(b.socket().toString());
        kubelet.awaitEvent(
            before,
            e ->
                e.kind() == Kind.LIST_AND_WATCH
                    && e.endpoint().orElse("").equals(b.socket().toString()),
            WAIT);
        Mark m = kubelet.mark();

        Files.delete(a.socket());

        KubeletEvent d = kubelet.awaitEvent(m, e -> e.kind() == Kind.DISCONNECT, WAIT);
        assertThat(d.endpoint()).contains(a.socket().toString());
        assertThat(kubelet.registration(RES)).isEmpty();
        assertThat(kubelet.allocatable(RES)).isZero();
        assertThat(b.openStreams()).isEqualTo(1);
        assertThat(kubelet.unhealthyWindows(RES, m)).hasSize(1);
      }
    }
  }

  /**
   * A registry socket replaced by a new file (here an atomic rename: inotify reports only the
   * create) is unregistered and registered again, as the kubelet's reconciler does when the
   * socket's timestamp changes: the resource is disconnected in between.
   */
  @Test
  void aReplacedRegistrySocketIsDeregisteredThenRegisteredAgain() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestPlugin old =
            new TestPlugin(RES, dir.resolve("reg/w.sock"))
                .devices(TestPlugin.healthyDevices(1))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start();
        TestPlugin next =
            new TestPlugin(RES, dir.resolve("reg/.next.sock"))
                .devices(TestPlugin.healthyDevices(2))
                .pluginInfo(info(RES, "", "v1beta1"))
                .start()) {
      kubelet.awaitDevices(RES, l -> l.size() == 1, WAIT);
      kubelet.awaitEvent(e -> e.kind() == Kind.NOTIFY_REGISTRATION_STATUS, WAIT);
      Mark m = kubelet.mark();

      Files.move(
          next.socket(),
          old.socket(),
          java.nio.file.StandardCopyOption.ATOMIC_MOVE,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);

      Registration again = kubelet.awaitRegistration(RES, m, WAIT);
      KubeletEvent dereg = kubelet.awaitEvent(m, e -> e.kind() == Kind.DEREGISTER, WAIT);
      KubeletEvent disconnect = kubelet.awaitEvent(m, e -> e.kind() == Kind.DISCONNECT, WAIT);
      assertThat(dereg.seq()).isLessThan(again.seq());
      assertThat(disconnect.seq()).isLessThan(again.seq());
      kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
      assertThat(kubelet.unhealthyWindows(RES, m)).hasSize(1);
    }
  }
}
