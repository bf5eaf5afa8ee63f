package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.PluginObserver.DeviceListSent;
import io.github.deviceplugin4j.core.PluginObserver.Discovery;
import io.github.deviceplugin4j.core.PluginObserver.Method;
import io.github.deviceplugin4j.core.PluginObserver.Registration;
import io.github.deviceplugin4j.core.PluginObserver.Rpc;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a {@link PluginObserver} sees, over real sockets with the fake kubelet. */
class ObserverTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/gpu";

  @TempDir Path dir;

  /** Four GPUs, a preferred-allocation policy and a pre-start hook. */
  static final class GpuBackend extends TestBackend implements PreferredAllocator, PreStartHook {
    GpuBackend() {
      super(RESOURCE, IntStream.range(0, 4).mapToObj(i -> Device.healthy("gpu" + i)).toList());
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) {
      return request.availableIds().stream().sorted().limit(request.size()).toList();
    }

    @Override
    public void preStart(List<Device> devices) {}
  }

  private DevicePluginHost host(DeviceBackend backend, PluginObserver... observers) {
    DevicePluginHost.Builder b =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(backend);
    for (PluginObserver o : observers) {
      b.observer(o);
    }
    return b.start();
  }

  @Test
  void allocation_reportsPreferredAllocateAndPreStart_withDeviceCountsAndOk() {
    RecordingObserver seen = new RecordingObserver();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(new GpuBackend(), seen)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      kubelet.allocate(RESOURCE, 2);

      Rpc preferred = seen.awaitRpc(Method.GET_PREFERRED_ALLOCATION, r -> true);
      assertThat(preferred.code()).isEqualTo("OK");
      assertThat(preferred.devices()).isEqualTo(4); // the available ones
      assertThat(preferred.resourceName()).isEqualTo(RESOURCE);
      Rpc allocate = seen.awaitRpc(Method.ALLOCATE, r -> true);
      assertThat(allocate.ok()).isTrue();
      assertThat(allocate.devices()).isEqualTo(2);
      assertThat(allocate.nanos()).isPositive();
      Rpc preStart = seen.awaitRpc(Method.PRE_START_CONTAINER, r -> true);
      assertThat(preStart.code()).isEqualTo("OK");
      assertThat(preStart.devices()).isEqualTo(2);
      assertThat(seen.awaitRpc(Method.GET_DEVICE_PLUGIN_OPTIONS, r -> true).ok()).isTrue();
    }
  }

  @Test
  void aSlowObserver_doesNotHoldBackTheAnswerOfACallServedOnTheEventLoop() throws Exception {
    // A declarative Allocate is answered on the event loop, and reported to the observers there
    // right after: the answer must be on its way before the report runs.
    CountDownLatch inObserver = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    PluginObserver slow =
        new PluginObserver() {
          @Override
          public void onRpc(Rpc rpc) {
            if (rpc.method() == Method.ALLOCATE) {
              inObserver.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        };
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(TestBackend.of(RESOURCE, "gpu0", "gpu1"), slow)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);

      CompletableFuture<Allocation> answer =
          CompletableFuture.supplyAsync(() -> kubelet.allocate(RESOURCE, "gpu0"));
      try {
        assertThat(inObserver.await(10, TimeUnit.SECONDS)).as("the observer was called").isTrue();
        // The observer still holds the loop; the kubelet has its answer all the same.
        assertThat(answer.get(10, TimeUnit.SECONDS).deviceIds()).containsExactly("gpu0");
        assertThat(release.getCount()).as("the observer was still running").isEqualTo(1);
      } finally {
        release.countDown();
      }
    }
  }

  @Test
  void allocate_unknownDevice_reportsInvalidArgument() {
    RecordingObserver seen = new RecordingObserver();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(new GpuBackend(), seen)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      assertThatThrownBy(() -> kubelet.allocate(RESOURCE, "gpu9"))
          .isInstanceOf(AllocationException.class);

      Rpc allocate = seen.awaitRpc(Method.ALLOCATE, r -> true);
      assertThat(allocate.code()).isEqualTo("INVALID_ARGUMENT");
      assertThat(allocate.ok()).isFalse();
      assertThat(allocate.devices()).isEqualTo(1);
    }
  }

  @Test
  void registrationAndReRegistrationAfterKubeletRestart_areReported() {
    RecordingObserver seen = new RecordingObserver();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(new GpuBackend(), seen)) {
      kubelet.awaitRegistration(RESOURCE, WAIT);
      Registration first = seen.await(Registration.class, Registration::success);
      assertThat(first.resourceName()).isEqualTo(RESOURCE);
      assertThat(first.mode()).isEqualTo(RegistrationMode.LEGACY);
      assertThat(first.apiVersion()).isEqualTo("v1beta1");
      assertThat(first.attempt()).isEqualTo(1);
      assertThat(first.reRegistration()).isFalse();
      assertThat(first.failure()).isEmpty();
      seen.await(RecordingObserver.StreamOpened.class, s -> s.openStreams() == 1);

      kubelet.restart();

      Registration again = seen.await(Registration.class, r -> r.success() && r.reRegistration());
      assertThat(again.mode()).isEqualTo(RegistrationMode.LEGACY);
      assertThat(again.attempt()).isGreaterThanOrEqualTo(1);
      // The old connection's stream ended when the kubelet went away.
      Rpc ended = seen.awaitRpc(Method.LIST_AND_WATCH, r -> true);
      assertThat(ended.code()).isEqualTo("CANCELLED");
      assertThat(ended.nanos()).isPositive();
    }
  }

  @Test
  void healthChange_isReportedAsTheDeviceListSentOnTheStream() {
    RecordingObserver seen = new RecordingObserver();
    GpuBackend backend = new GpuBackend();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend, seen)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      DeviceListSent first = seen.await(DeviceListSent.class, s -> true);
      assertThat(first.healthy()).isEqualTo(4);
      assertThat(first.unhealthy()).isZero();
      assertThat(first.bytes()).isPositive();
      assertThat(first.openStreams()).isEqualTo(1);

      backend.publish(
          List.of(
              Device.healthy("gpu0"),
              Device.healthy("gpu1").withHealth(Health.UNHEALTHY),
              Device.healthy("gpu2"),
              Device.healthy("gpu3")));

      DeviceListSent change = seen.await(DeviceListSent.class, s -> s.unhealthy() == 1);
      assertThat(change.healthy()).isEqualTo(3);
      assertThat(change.resourceName()).isEqualTo(RESOURCE);
      kubelet.awaitDevices(
          RESOURCE, d -> d.stream().filter(x -> x.health().equals("Unhealthy")).count() == 1, WAIT);
    }
  }

  @Test
  void failingDiscovery_isReportedWithItsReason_thenTheSuccessThatFollows() {
    RecordingObserver seen = new RecordingObserver();
    AtomicInteger calls = new AtomicInteger();
    TestBackend backend =
        new TestBackend(RESOURCE, List.of(Device.healthy("gpu0"))) {
          @Override
          public List<Device> devices() {
            if (calls.getAndIncrement() == 0) {
              throw new IllegalStateException("driver not loaded");
            }
            return super.devices();
          }
        };
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend, seen)) {
      Discovery failed = seen.await(Discovery.class, d -> !d.success());
      assertThat(failed.resourceName()).isEqualTo(RESOURCE);
      assertThat(failed.failure()).contains("driver not loaded");
      assertThat(failed.devices()).isZero();

      backend.sink.rescan();

      Discovery ok = seen.await(Discovery.class, Discovery::success);
      assertThat(ok.devices()).isEqualTo(1);
      assertThat(ok.failure()).isEmpty();
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 1, WAIT);
    }
  }

  @Test
  void observerThatThrows_isLoggedOnce_andCallsAreAnsweredAnyway() {
    RecordingObserver seen = new RecordingObserver();
    PluginObserver broken =
        new PluginObserver() {
          @Override
          public void onRpc(Rpc rpc) {
            throw new IllegalStateException("observer bug");
          }
        };
    try (LogCapture log = new LogCapture();
        FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(new GpuBackend(), broken, seen)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      kubelet.allocate(RESOURCE, "gpu0");
      kubelet.allocate(RESOURCE, "gpu1");

      assertThat(seen.count(Rpc.class, r -> r.method() == Method.ALLOCATE && r.ok())).isEqualTo(2);
      assertThat(log.count("onRpc threw")).isEqualTo(1);
    }
  }

  @Test
  void pluginWatcherRegistration_isReportedInItsMode() throws Exception {
    RecordingObserver seen = new RecordingObserver();
    Path plugins = java.nio.file.Files.createDirectories(dir.resolve("dp"));
    Path registry = java.nio.file.Files.createDirectories(dir.resolve("reg"));
    try (FakeKubelet kubelet =
            FakeKubelet.builder().pluginDir(plugins).registryDir(registry).start();
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(plugins)
                .registryDir(registry)
                .registrationMode(RegistrationMode.PLUGIN_WATCHER)
                .backend(new GpuBackend())
                .observer(seen)
                .start()) {
      kubelet.awaitRegistration(RESOURCE, WAIT);
      Registration r = seen.await(Registration.class, Registration::success);
      assertThat(r.mode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
      assertThat(r.attempt()).isEqualTo(1);
      assertThat(r.reRegistration()).isFalse();
      assertThat(r.nanos()).isNotNegative();
    }
  }
}
