package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A list the backend pushes while a rescan's {@code devices()} call is under way is newer than what
 * that call returns: the pushed list stays, and the older one read is dropped rather than replacing
 * it (seen in HealthReasonTest: the push was lost, the device never went unhealthy).
 */
class PushAndRescanOrderTest {

  private static final String RESOURCE = "example.com/gpu";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  /** A backend whose devices() can be held after reading, and made to fail. */
  static final class HeldBackend extends TestBackend {
    volatile CountDownLatch entered;
    volatile CountDownLatch release;
    volatile boolean fail;

    HeldBackend() {
      super(RESOURCE, List.of(Device.healthy("gpu0"), Device.healthy("gpu1")));
    }

    @Override
    public List<Device> devices() {
      List<Device> read = super.devices();
      CountDownLatch in = entered;
      CountDownLatch out = release;
      if (in != null && out != null) {
        in.countDown();
        try {
          out.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (fail) {
        throw new IllegalStateException("held read fails on purpose");
      }
      return read;
    }

    void hold() {
      entered = new CountDownLatch(1);
      release = new CountDownLatch(1);
    }
  }

  @Test
  void aPushDuringARescanIsNotReplacedByTheOlderListTheRescanRead() throws Exception {
    HeldBackend backend = new HeldBackend();
    List<Integer> healthy = new CopyOnWriteArrayList<>();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(backend)
                .listener(
                    new PluginListener() {
                      @Override
                      public void onDevicesChanged(String resource, int total, int ok) {
                        healthy.add(ok);
                      }
                    })
                .start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      healthy.clear();

      // A rescan reads both devices healthy and is held; meanwhile gpu1 is pushed unhealthy.
      backend.hold();
      backend.sink.rescan();
      assertThat(backend.entered.await(10, TimeUnit.SECONDS)).isTrue();
      backend.publish(
          List.of(Device.healthy("gpu0"), Device.healthy("gpu1").withHealth(Health.UNHEALTHY)));
      await().atMost(WAIT).until(() -> healthy.contains(1));
      backend.release.countDown(); // the held rescan returns the older list

      // Reads run one at a time: once the next one has started, the held one is over.
      backend.hold();
      backend.fail = true;
      backend.sink.rescan();
      assertThat(backend.entered.await(10, TimeUnit.SECONDS)).isTrue();
      backend.publish(
          List.of(
              Device.healthy("gpu0").withHealth(Health.UNHEALTHY),
              Device.healthy("gpu1").withHealth(Health.UNHEALTHY)));
      backend.release.countDown();

      await().atMost(WAIT).until(() -> healthy.contains(0));
      assertThat(healthy).as("healthy devices after each change").containsExactly(1, 0);
      assertThat(host.status(RESOURCE).unhealthyReasons()).containsOnlyKeys("gpu0", "gpu1");
    }
  }
}
