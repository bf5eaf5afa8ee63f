package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Liveness names what is stuck and recovers; readiness names what is not registered. */
class LivenessTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration GENEROUS = Duration.ofSeconds(60);
  private static final Duration SHORT = Duration.ofMillis(300);
  private static final String RESOURCE = "example.com/gpu";

  @TempDir Path dir;

  /** A backend whose devices() hangs, once told to, until released. */
  static final class HangingBackend extends TestBackend {
    final AtomicBoolean hang = new AtomicBoolean();
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    HangingBackend() {
      super(RESOURCE, List.of(Device.healthy("gpu0")));
    }

    @Override
    public List<Device> devices() {
      if (hang.get()) {
        entered.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.devices();
    }
  }

  private DevicePluginHost.Builder builder(DeviceBackend backend) {
    return DevicePluginHost.builder()
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(backend);
  }

  @Test
  void hangingDevicesCall_failsLivenessNamingDiscovery_andItRecoversWhenReleased()
      throws Exception {
    HangingBackend backend = new HangingBackend();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = builder(backend).start()) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 1, WAIT);
      assertThat(host.liveness(GENEROUS).ok()).isTrue();

      backend.hang.set(true);
      backend.sink.rescan();
      assertThat(backend.entered.await(10, TimeUnit.SECONDS)).isTrue();

      ProbeResult stuck = host.liveness(SHORT);
      assertThat(stuck.ok()).isFalse();
      assertThat(stuck.problems())
          .singleElement()
          .asString()
          .startsWith("discovery of example.com/gpu")
          .contains("devices() has not returned");
      assertThat(stuck.describe()).contains("did not run a task within 300 ms");

      backend.hang.set(false);
      backend.release.countDown();
      await().atMost(WAIT).until(() -> host.liveness(SHORT).ok());
    }
  }

  @Test
  void listenerBlockingTheControlLoop_failsLivenessNamingIt_andItRecovers() {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    PluginListener blocking =
        new PluginListener() {
          @Override
          public void onRegistered(String resource, RegistrationMode mode, boolean again) {
            entered.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            builder(TestBackend.of(RESOURCE, "gpu0")).listener(blocking).start()) {
      await().atMost(WAIT).until(() -> entered.getCount() == 0);

      ProbeResult stuck = host.liveness(SHORT);
      assertThat(stuck.problems())
          .singleElement()
          .asString()
          .startsWith("control loop of example.com/gpu");

      release.countDown();
      await().atMost(WAIT).until(() -> host.liveness(SHORT).ok());
    }
  }

  /** Declared non-blocking, but it blocks: it holds the event loop. */
  static final class Misdeclared extends TestBackend implements Allocator {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    Misdeclared() {
      super(RESOURCE, List.of(Device.healthy("gpu0")));
    }

    @NonBlocking
    @Override
    public ContainerAllocation allocate(AllocationRequest request) throws InterruptedException {
      entered.countDown();
      release.await();
      return ContainerAllocation.empty();
    }
  }

  @Test
  void blockedEventLoop_failsLivenessNamingIt() throws Exception {
    Misdeclared backend = new Misdeclared();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = builder(backend).start();
        PluginClient client = PluginClient.connect(host.status(RESOURCE).socket())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 1, WAIT);
      CountDownLatch answered = new CountDownLatch(1);
      client
          .async()
          .allocate(
              AllocateRequest.newBuilder()
                  .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds("gpu0"))
                  .build(),
              new StreamObserver<AllocateResponse>() {
                @Override
                public void onNext(AllocateResponse value) {}

                @Override
                public void onError(Throwable t) {
                  answered.countDown();
                }

                @Override
                public void onCompleted() {
                  answered.countDown();
                }
              });
      assertThat(backend.entered.await(10, TimeUnit.SECONDS)).isTrue();

      assertThat(host.liveness(SHORT).problems())
          .anySatisfy(p -> assertThat(p).startsWith("gRPC event loop"));

      backend.release.countDown();
      assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
      await().atMost(WAIT).until(() -> host.liveness(SHORT).ok());
    }
  }

  @Test
  void readiness_namesResourcesNotRegistered_untilTheKubeletHasThem() {
    try (DevicePluginHost host = builder(TestBackend.of(RESOURCE, "gpu0")).start()) {
      ProbeResult notYet = host.readiness();
      assertThat(notYet.ok()).isFalse();
      assertThat(notYet.problems())
          .containsExactly("example.com/gpu is not registered with the kubelet");

      try (FakeKubelet kubelet = FakeKubelet.start(dir)) {
        kubelet.awaitRegistration(RESOURCE, WAIT);
        await().atMost(WAIT).until(() -> host.readiness().ok());
        assertThat(host.readiness().describe()).isEqualTo("ok");
      }
    }
  }

  @Test
  void closedHost_isNeitherLiveNorReady() {
    DevicePluginHost host = builder(TestBackend.of(RESOURCE, "gpu0")).start();
    host.close();
    assertThat(host.liveness(SHORT).describe()).isEqualTo("the plugin host is closed");
    assertThat(host.readiness().ok()).isFalse();
  }
}
