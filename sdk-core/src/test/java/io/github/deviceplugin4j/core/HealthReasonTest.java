package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Why a device is unhealthy: logged once per change, shown in the status, never sent. */
class HealthReasonTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/gpu";

  @TempDir Path dir;

  private DevicePluginHost host(DeviceBackend backend) {
    return DevicePluginHost.builder()
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(backend)
        .start();
  }

  private static List<Device> gpus(Device... changed) {
    List<Device> list = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Device d = Device.healthy("gpu" + i);
      for (Device c : changed) {
        if (c.id().equals(d.id())) {
          d = c;
        }
      }
      list.add(d);
    }
    return list;
  }

  @Test
  void healthChange_isLoggedOnceWithItsReason_andShownInStatus() {
    TestBackend backend = new TestBackend(RESOURCE, gpus());
    try (LogCapture log = new LogCapture();
        FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 3, WAIT);
      Device sick = Device.healthy("gpu1").withHealth(Health.UNHEALTHY, "ECC errors over limit");

      backend.publish(gpus(sick));
      await().atMost(WAIT).until(() -> host.status(RESOURCE).unhealthyReasons(), r -> !r.isEmpty());
      assertThat(host.status(RESOURCE).unhealthyReasons())
          .containsExactly(Map.entry("gpu1", "ECC errors over limit"));
      String change = "device \"gpu1\": Healthy -> Unhealthy (ECC errors over limit)";
      await().atMost(WAIT).until(() -> log.count(change) == 1);

      // The same list again, then a change of another device: gpu1's line is not repeated.
      backend.publish(gpus(sick));
      backend.sink.rescan();
      backend.publish(gpus(sick, Device.healthy("gpu2").withHealth(Health.UNHEALTHY)));
      await().atMost(WAIT).until(() -> log.count("device \"gpu2\": Healthy -> Unhealthy") == 1);
      assertThat(log.count(change)).isEqualTo(1);
      assertThat(host.status(RESOURCE).unhealthyReasons())
          .containsExactly(Map.entry("gpu1", "ECC errors over limit"), Map.entry("gpu2", ""));

      backend.publish(gpus());
      await().atMost(WAIT).until(() -> log.count("device \"gpu1\": Unhealthy -> Healthy") == 1);
      assertThat(host.status(RESOURCE).unhealthyReasons()).isEmpty();
      // The kubelet sees only health: the reason has no field in its API.
      kubelet.awaitDevices(
          RESOURCE, d -> d.stream().allMatch(x -> x.health().equals("Healthy")), WAIT);
    }
  }

  @Test
  void overlongReasonWithControlCharacters_isShortenedAndReported_andNoDeviceIsLost() {
    TestBackend backend = new TestBackend(RESOURCE, gpus());
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 3, WAIT);
      String reason = "line1\nline2 " + "x".repeat(300);

      backend.publish(gpus(Device.healthy("gpu0").withHealth(Health.UNHEALTHY, reason)));

      await()
          .atMost(WAIT)
          .until(() -> host.status(RESOURCE).unhealthyReasons(), r -> r.containsKey("gpu0"));
      String kept = host.status(RESOURCE).unhealthyReasons().get("gpu0");
      assertThat(kept).startsWith("line1 line2 xxx").endsWith("...").hasSize(Device.MAX_REASON);
      assertThat(host.status(RESOURCE).lastError())
          .get()
          .asString()
          .contains("device \"gpu0\" kept, but its unhealthy reason is 312 characters");
      assertThat(host.status(RESOURCE).totalDevices()).isEqualTo(3);
      kubelet.awaitDevices(
          RESOURCE,
          d -> d.size() == 3 && d.stream().filter(x -> x.health().equals("Unhealthy")).count() == 1,
          WAIT);
    }
  }

  @Test
  void reasonWithALatin1ControlCharacter_hasItReplacedAsReported() {
    TestBackend backend = new TestBackend(RESOURCE, gpus());
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 3, WAIT);

      // U+0085 (NEXT LINE) is a control character that \p{Cntrl} (ASCII only) does not match
      backend.publish(
          gpus(Device.healthy("gpu0").withHealth(Health.UNHEALTHY, "fan\u0085stopped\u009b")));

      await()
          .atMost(WAIT)
          .until(() -> host.status(RESOURCE).unhealthyReasons(), r -> r.containsKey("gpu0"));
      assertThat(host.status(RESOURCE).unhealthyReasons()).containsEntry("gpu0", "fan stopped ");
      assertThat(host.status(RESOURCE).lastError())
          .get()
          .asString()
          .contains("contains a control character; replaced by a space");
    }
  }

  @Test
  void reasonBelongsToUnhealthyDevicesOnly_andTheFourArgumentConstructorStillWorks() {
    Device plain = new Device("a", Health.UNHEALTHY, List.of(0), ContainerAllocation.empty());
    assertThat(plain.unhealthyReason()).isEmpty();
    assertThat(plain.withHealth(Health.UNHEALTHY, "fan stopped").unhealthyReason())
        .isEqualTo("fan stopped");
    assertThat(plain.withHealth(Health.HEALTHY, "fan stopped").unhealthyReason()).isEmpty();
    assertThat(plain.withHealth(Health.UNHEALTHY, "fan").withHealth(Health.UNHEALTHY))
        .isEqualTo(plain);
    assertThat(Device.builder("b").health(Health.UNHEALTHY, "link down").build().unhealthyReason())
        .isEqualTo("link down");
  }

  @Test
  void firstDiscoveryFailing_saysNoDeviceListYet_notThatALastGoodListStays() {
    AtomicInteger calls = new AtomicInteger();
    TestBackend backend =
        new TestBackend(RESOURCE, gpus()) {
          @Override
          public List<Device> devices() {
            if (calls.getAndIncrement() == 0) {
              throw new IllegalStateException("driver not loaded");
            }
            return super.devices();
          }
        };
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend)) {
      String error = host.status(RESOURCE).lastError().orElseThrow();
      assertThat(error)
          .contains("driver not loaded")
          .contains("no device list yet")
          .doesNotContain("last good");

      backend.sink.rescan(); // succeeds
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 3, WAIT);
    }
  }
}
