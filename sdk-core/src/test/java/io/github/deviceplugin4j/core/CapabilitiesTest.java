package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Capabilities given on the builder reach a decorating backend's resource. */
class CapabilitiesTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/gpu";

  @TempDir Path dir;

  /** The vendor's backend: implements every capability. */
  static class GpuBackend extends TestBackend implements Allocator, PreStartHook {
    final List<String> preStarted = new CopyOnWriteArrayList<>();

    GpuBackend() {
      super(RESOURCE, IntStream.range(0, 4).mapToObj(i -> Device.healthy("gpu" + i)).toList());
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      return ContainerAllocation.builder().env("FROM", "backend").build();
    }

    @Override
    public void preStart(List<Device> devices) {
      preStarted.add(devices.stream().map(Device::id).toList().toString());
    }
  }

  /** A decorator that implements only DeviceBackend, as a logging or caching wrapper would. */
  static final class Wrapper implements DeviceBackend {
    private final DeviceBackend inner;

    Wrapper(DeviceBackend inner) {
      this.inner = inner;
    }

    @Override
    public String resourceName() {
      return inner.resourceName();
    }

    @Override
    public List<Device> devices() throws Exception {
      return inner.devices();
    }

    @Override
    public void start(DeviceSink sink) throws Exception {
      inner.start(sink);
    }
  }

  /** Picks the highest IDs: unlike the kubelet's own choice. */
  static final PreferredAllocator HIGHEST =
      request ->
          request.availableIds().stream()
              .sorted(Comparator.reverseOrder())
              .limit(request.size())
              .toList();

  private DevicePluginHost host(DeviceBackend backend, Capabilities capabilities) {
    return DevicePluginHost.builder()
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(backend, capabilities)
        .start();
  }

  @Test
  void wrappedBackend_getsAllocateFromTheBuilderSuppliedAllocator() {
    GpuBackend gpu = new GpuBackend();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            host(new Wrapper(gpu), Capabilities.builder().allocator(gpu).build())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      Allocation a = kubelet.allocate(RESOURCE, "gpu0");
      assertThat(a.envs()).containsEntry("FROM", "backend");
    }
  }

  @Test
  void wrappedBackend_getsPreferredAllocationFromTheBuilder_andTheKubeletIsToldToAsk() {
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            host(
                new Wrapper(new GpuBackend()),
                Capabilities.builder().preferredAllocator(HIGHEST).build())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      Allocation a = kubelet.allocate(RESOURCE, 2);
      assertThat(a.deviceIds()).containsExactlyInAnyOrder("gpu3", "gpu2");
    }
  }

  @Test
  void wrappedBackend_getsPreStartFromTheBuilderSuppliedHook() {
    GpuBackend gpu = new GpuBackend();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            host(new Wrapper(gpu), Capabilities.builder().preStartHook(gpu).build())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      kubelet.allocate(RESOURCE, "gpu1");
      assertThat(gpu.preStarted).containsExactly("[gpu1]");
    }
  }

  @Test
  void builderSuppliedCapability_winsOverTheOneTheBackendImplements_othersStayDetected() {
    GpuBackend gpu = new GpuBackend();
    Allocator builderAllocator = r -> ContainerAllocation.builder().env("FROM", "builder").build();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            host(gpu, Capabilities.builder().allocator(builderAllocator).build())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      Allocation a = kubelet.allocate(RESOURCE, "gpu2");
      assertThat(a.envs()).containsEntry("FROM", "builder");
      assertThat(gpu.preStarted).containsExactly("[gpu2]"); // the backend's own hook
    }
  }

  /** A builder-supplied allocator declared non-blocking. */
  @NonBlocking
  static final class InlineAllocator implements Allocator {
    final List<String> threads = new CopyOnWriteArrayList<>();

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      threads.add(Thread.currentThread().getName());
      return ContainerAllocation.empty();
    }
  }

  @Test
  void nonBlockingMarkOnABuilderSuppliedCapability_runsItOnTheEventLoop_othersOnWorkers() {
    InlineAllocator inline = new InlineAllocator();
    List<String> hookThreads = new CopyOnWriteArrayList<>();
    PreStartHook hook = devices -> hookThreads.add(Thread.currentThread().getName());
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            host(
                new Wrapper(new GpuBackend()),
                Capabilities.builder().allocator(inline).preStartHook(hook).build())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 4, WAIT);
      kubelet.allocate(RESOURCE, "gpu3");
      assertThat(inline.threads).singleElement().asString().startsWith("deviceplugin4j-eventloop-");
      assertThat(hookThreads).singleElement().asString().startsWith("deviceplugin4j-worker-");
    }
  }
}
