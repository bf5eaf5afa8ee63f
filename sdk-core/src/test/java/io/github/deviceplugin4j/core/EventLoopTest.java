package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerResponse;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Calls stay on the event loop when nothing can block, and vendor code that may block runs off it:
 * a backend that hangs in every capability at once holds worker threads, never the one event loop
 * thread that serves every socket of the host. The probes are calls the loop itself answers (gRPC
 * runs every call on it), and a {@link NonBlocking} policy that records the thread it ran on.
 */
class EventLoopTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String SLOW = "example.com/slow";
  private static final String FAST = "example.com/fast";
  private static final String LOOP_THREAD = "deviceplugin4j-eventloop-";

  @TempDir Path dir;

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void close() throws Exception {
    release.countDown();
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    TestSupport.awaitNoCoreThreads();
  }

  /** Hangs in every capability for device "h0" until released; records the threads. */
  final class HangingBackend extends TestBackend
      implements Allocator, PreferredAllocator, PreStartHook {
    final Map<String, String> threads = new ConcurrentHashMap<>();
    final CountDownLatch entered = new CountDownLatch(3);

    HangingBackend() {
      super(SLOW, List.of(Device.healthy("h0"), Device.healthy("ok")));
    }

    private void hang(String capability) throws InterruptedException {
      threads.put(capability, Thread.currentThread().getName());
      entered.countDown();
      release.await();
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) throws Exception {
      if (request.deviceIds().contains("h0")) {
        hang("allocate");
      }
      return request.defaultAllocation();
    }

    @Override
    public List<String> preferredAllocation(
        io.github.deviceplugin4j.core.PreferredAllocationRequest request) throws Exception {
      hang("preferred");
      return request.availableIds().subList(0, request.size());
    }

    @Override
    public void preStart(List<Device> devices) throws Exception {
      if (devices.stream().anyMatch(d -> d.id().equals("h0"))) {
        hang("preStart");
      }
    }
  }

  /** Declares its policy non-blocking; records the thread it ran on. */
  static final class FastBackend extends TestBackend implements PreferredAllocator {
    volatile String thread;

    FastBackend() {
      super(FAST, List.of(Device.healthy("f0"), Device.healthy("f1")));
    }

    @NonBlocking
    @Override
    public List<String> preferredAllocation(
        io.github.deviceplugin4j.core.PreferredAllocationRequest request) throws Exception {
      thread = Thread.currentThread().getName();
      return AllocationPolicies.packed().preferredAllocation(request);
    }
  }

  private PluginClient client(DevicePluginHost host, String resource) {
    PluginClient c = PluginClient.connect(host.status(resource).socket());
    closeables.add(c);
    return c;
  }

  private static <T> StreamObserver<T> into(CompletableFuture<T> f) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        f.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        f.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    };
  }

  private static PreferredAllocationRequest preferred(List<String> available, int size) {
    return PreferredAllocationRequest.newBuilder()
        .addContainerRequests(
            ContainerPreferredAllocationRequest.newBuilder()
                .addAllAvailableDeviceIDs(available)
                .setAllocationSize(size))
        .build();
  }

  private static AllocateRequest allocate(String id) {
    return AllocateRequest.newBuilder()
        .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(id))
        .build();
  }

  private static PreStartContainerRequest preStart(String id) {
    return PreStartContainerRequest.newBuilder().addDevicesIds(id).build();
  }

  @Test
  void aBackendHangingInEveryCapabilityHoldsWorkersNeverTheEventLoop() throws Exception {
    HangingBackend slow = new HangingBackend();
    FastBackend fast = new FastBackend();
    DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(slow)
            .backend(fast)
            .start();
    closeables.add(host);
    PluginClient slowClient = client(host, SLOW);
    PluginClient fastClient = client(host, FAST);
    StreamCollector stream = new StreamCollector();
    slowClient.async().listAndWatch(Empty.getDefaultInstance(), stream);
    assertThat(stream.next(WAIT)).containsExactly("h0:Healthy", "ok:Healthy");

    CompletableFuture<AllocateResponse> hungAllocate = new CompletableFuture<>();
    CompletableFuture<PreferredAllocationResponse> hungPreferred = new CompletableFuture<>();
    CompletableFuture<PreStartContainerResponse> hungPreStart = new CompletableFuture<>();
    slowClient.async().allocate(allocate("h0"), into(hungAllocate));
    slowClient
        .async()
        .getPreferredAllocation(preferred(List.of("h0", "ok"), 1), into(hungPreferred));
    slowClient.async().preStartContainer(preStart("h0"), into(hungPreStart));
    assertThat(slow.entered.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
        .as("all three backend calls entered")
        .isTrue();
    assertThat(slow.threads.values())
        .as("calls that may block run on worker threads")
        .hasSize(3)
        .allSatisfy(name -> assertThat(name).startsWith("deviceplugin4j-worker-"));

    // While all three hang, the loop answers everything else, on both sockets.
    DevicePluginOptions options =
        slowClient.blocking().getDevicePluginOptions(Empty.getDefaultInstance());
    assertThat(options.getPreStartRequired()).isTrue();
    assertThat(
            fastClient
                .blocking()
                .getPreferredAllocation(preferred(List.of("f1", "f0"), 1))
                .getContainerResponses(0)
                .getDeviceIDsList())
        .hasSize(1);
    assertThat(fast.thread)
        .as("a NonBlocking policy runs on the event loop")
        .startsWith(LOOP_THREAD);
    assertThat(fastClient.blocking().allocate(allocate("f0")).getContainerResponsesCount())
        .isEqualTo(1);
    assertThat(slowClient.blocking().allocate(allocate("ok")).getContainerResponsesCount())
        .as("the same backend's other calls are served")
        .isEqualTo(1);
    slowClient.blocking().preStartContainer(preStart("ok"));
    slow.publish(List.of(Device.healthy("h0"), Device.healthy("ok").withHealth(Health.UNHEALTHY)));
    assertThat(stream.next(WAIT))
        .as("health streaming goes on")
        .containsExactly("h0:Healthy", "ok:Unhealthy");

    assertThat(hungAllocate).isNotDone();
    release.countDown();
    assertThat(
            hungAllocate.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).getContainerResponsesCount())
        .isEqualTo(1);
    assertThat(
            hungPreferred
                .get(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .getContainerResponses(0)
                .getDeviceIDsList())
        .hasSize(1);
    hungPreStart.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
