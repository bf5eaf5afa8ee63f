package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.assertj.KubeletAssertions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Re-registering while the kubelet runs: the kubelet never closes the superseded connection, and
 * when any ListAndWatch stream of the resource ends it takes the whole resource offline. So the
 * plugin keeps a superseded connection's stream open, in step with the device list, until the
 * kubelet drops it or the plugin stops.
 */
class SupersededConnectionTest {

  private static final String RESOURCE = "example.com/dev";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  /** Longer than the superseded server's forced close used to wait (10 s) would be too slow. */
  private static final Duration STAYS_OPEN = Duration.ofSeconds(2);

  @TempDir Path tmp;

  private final List<AutoCloseable> closeables = new ArrayList<>();

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

  /** A kubelet-like raw client holding ListAndWatch on a socket, as the kubelet's client does. */
  private StreamCollector holdStream(Path socket) throws InterruptedException {
    PluginClient client = closeLater(PluginClient.connect(socket));
    StreamCollector stream = new StreamCollector();
    client.async().listAndWatch(Empty.getDefaultInstance(), stream);
    assertThat(stream.next(WAIT)).containsExactly("d0:Healthy");
    return stream;
  }

  private static boolean open(StreamCollector s) {
    return !s.completed && s.error.get() == null;
  }

  @Test
  void socketDeletedWhileTheKubeletRuns_theSupersededStreamStaysOpenAndInStep() throws Exception {
    Path pluginDir = tmp.resolve("dp");
    FakeKubelet kubelet = closeLater(FakeKubelet.builder().pluginDir(pluginDir).start());
    TestBackend backend = TestBackend.of(RESOURCE, "d0");
    DevicePluginHost host =
        closeLater(
            DevicePluginHost.builder()
                .pluginDir(pluginDir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(backend)
                .start());
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(host::isReady);
    Path socket = host.status(RESOURCE).socket();
    StreamCollector superseded = holdStream(socket);

    Mark deleted = kubelet.mark();
    Files.delete(socket);
    kubelet.awaitRegistration(RESOURCE, deleted, WAIT);
    await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() == 2);
    assertThat(TestSupport.isSocket(socket)).isTrue();

    // The fake kubelet, like the real one, keeps the superseded connection, and would take the
    // resource offline (unhealthy window) if any stream of it ended.
    await().during(STAYS_OPEN).atMost(STAYS_OPEN.plus(WAIT)).until(() -> open(superseded));
    KubeletAssertions.assertThat(kubelet).hasNoUnhealthyWindow(RESOURCE, deleted);
    backend.publish(List.of(Device.healthy("d0"), Device.healthy("d1")));
    assertThat(superseded.next(WAIT)).containsExactly("d0:Healthy", "d1:Healthy");
    backend.publish(
        List.of(Device.healthy("d0"), Device.builder("d1").health(Health.UNHEALTHY).build()));
    assertThat(superseded.next(WAIT)).containsExactly("d0:Healthy", "d1:Unhealthy");
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
    KubeletAssertions.assertThat(kubelet).hasNoUnhealthyWindow(RESOURCE, deleted);

    host.close();
    await().atMost(WAIT).until(() -> !open(superseded));
  }

  @Test
  void repeatedDeletes_everySupersededStreamStaysOpenUntilItsClientLeaves() throws Exception {
    Path pluginDir = tmp.resolve("dp");
    FakeKubelet kubelet = closeLater(FakeKubelet.builder().pluginDir(pluginDir).start());
    DevicePluginHost host =
        closeLater(
            DevicePluginHost.builder()
                .pluginDir(pluginDir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(TestBackend.of(RESOURCE, "d0"))
                .start());
    kubelet.awaitRegistration(RESOURCE, WAIT);
    Path socket = host.status(RESOURCE).socket();
    Mark first = kubelet.mark();
    List<StreamCollector> streams = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      streams.add(holdStream(socket));
      int before = host.status(RESOURCE).registrations();
      Files.delete(socket);
      await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() > before);
    }
    await()
        .during(STAYS_OPEN)
        .atMost(STAYS_OPEN.plus(WAIT))
        .until(() -> streams.stream().allMatch(SupersededConnectionTest::open));
    KubeletAssertions.assertThat(kubelet).hasNoUnhealthyWindow(RESOURCE, first);

    // A client that leaves ends its own stream only; the others stay.
    streams.get(0).cancel();
    await().atMost(WAIT).until(() -> !open(streams.get(0)));
    assertThat(open(streams.get(1)) && open(streams.get(2))).isTrue();
    await().atMost(WAIT).until(host::isReady);
  }
}
