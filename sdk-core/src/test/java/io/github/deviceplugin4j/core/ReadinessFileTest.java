package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The readiness file follows registration, kubelet loss and stop, over the real engine. */
class ReadinessFileTest {

  private static final String A = "example.com/a";
  private static final String B = "example.com/b";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;

  @AfterEach
  void noThreadsLeft() {
    TestSupport.awaitNoCoreThreads();
  }

  private DevicePluginHost host(PluginListener listener, String... resources) {
    DevicePluginHost.Builder b =
        DevicePluginHost.builder()
            .pluginDir(tmp.resolve("dp"))
            .registrationMode(RegistrationMode.LEGACY)
            .listener(listener);
    for (String r : resources) {
      b.backend(TestBackend.of(r, r.substring(r.indexOf('/') + 1) + "0"));
    }
    return b.start();
  }

  @Test
  void existsWhileEveryResourceIsRegistered_goesWithTheKubelet_andWithTheHost() throws Exception {
    Path file = tmp.resolve("probe/plugin.ready");
    ReadinessFile ready = new ReadinessFile(file, List.of(A, B));
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
        DevicePluginHost host = host(ready, A, B)) {
      kubelet.awaitRegistration(A, WAIT);
      kubelet.awaitRegistration(B, WAIT);
      await().atMost(WAIT).until(() -> Files.exists(file));
      assertThat(Files.readAllLines(file)).containsExactly(A, B);
      assertThat(host.isReady()).isTrue();
      assertThat(file.resolveSibling(".plugin.ready.tmp")).doesNotExist();

      kubelet.close(); // kubelet.sock disappears: every resource has lost the kubelet
      await().atMost(WAIT).until(() -> Files.notExists(file));
      assertThat(host.isReady()).isFalse();

      try (FakeKubelet again = FakeKubelet.start(tmp.resolve("dp"))) {
        again.awaitRegistration(A, WAIT);
        again.awaitRegistration(B, WAIT);
        await().atMost(WAIT).until(() -> Files.exists(file));
        assertThat(Files.readAllLines(file)).containsExactly(A, B);

        host.close();
        assertThat(file).as("deleted before close() returns").doesNotExist();
      }
    }
  }

  @Test
  void writtenOnlyOnceTheLastListedResourceRegisters_andDeletedWhenAnyIsLost() throws Exception {
    Path file = tmp.resolve("plugin.ready");
    ReadinessFile ready = new ReadinessFile(file, List.of(A, B));

    ready.onRegistered(A, RegistrationMode.LEGACY, false);
    assertThat(file).doesNotExist();
    ready.onRegistered(B, RegistrationMode.LEGACY, false);
    assertThat(Files.readAllLines(file)).containsExactly(A, B);

    ready.onKubeletLost(A);
    assertThat(file).doesNotExist();
    ready.onRegistered(A, RegistrationMode.LEGACY, true);
    assertThat(file).exists();

    ready.onStopped();
    assertThat(file).doesNotExist();
    ready.onRegistered(A, RegistrationMode.LEGACY, true);
    ready.onRegistered(B, RegistrationMode.LEGACY, true);
    assertThat(file).as("nothing is written after the host stopped").doesNotExist();
  }

  @Test
  void aFileLeftByAnEarlierRunIsDeletedAtOnce() throws Exception {
    Path file = tmp.resolve("plugin.ready");
    Files.writeString(file, A + "\n");

    ReadinessFile ready = new ReadinessFile(file, List.of(A));

    assertThat(file).doesNotExist();
    assertThat(ready.file()).isEqualTo(file.toAbsolutePath());
  }

  @Test
  void aFileThatCannotBeWrittenIsLoggedAndTheListenerKeepsWorking() throws Exception {
    Path notADirectory = Files.writeString(tmp.resolve("plain"), "x");
    ReadinessFile ready = new ReadinessFile(notADirectory.resolve("plugin.ready"), List.of(A));

    ready.onRegistered(A, RegistrationMode.LEGACY, false);
    ready.onKubeletLost(A);
    ready.onStopped();

    assertThat(notADirectory).hasContent("x");
  }

  @Test
  void anEmptyResourceListIsRejected() {
    assertThatThrownBy(() -> new ReadinessFile(tmp.resolve("plugin.ready"), List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resourceNames is empty");
  }

  @Test
  void onStoppedIsCalledOnceWhenTheHostClosesAfterItsSocketsAreGone() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    DevicePluginHost[] holder = new DevicePluginHost[1];
    PluginListener listener =
        new PluginListener() {
          @Override
          public void onStopped() {
            Path socket = holder[0].status(A).socket();
            calls.add("stopped, socket " + (Files.exists(socket) ? "present" : "removed"));
          }
        };
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
        DevicePluginHost host = host(listener, A)) {
      holder[0] = host;
      await().atMost(WAIT).until(host::isReady);
      assertThat(calls).isEmpty();

      host.close();
      host.close();

      assertThat(calls).containsExactly("stopped, socket removed");
    }
  }
}
