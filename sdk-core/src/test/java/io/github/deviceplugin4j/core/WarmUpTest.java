package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.DeviceState;
import io.github.deviceplugin4j.core.internal.PluginEndpoint;
import io.github.deviceplugin4j.core.internal.RequestDeadlines;
import io.github.deviceplugin4j.core.internal.RequestHandler;
import io.github.deviceplugin4j.core.internal.Snapshot;
import io.github.deviceplugin4j.core.internal.V1Beta1Adapter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The warm-up runs the request path in process before the kubelet's first call: it may run the
 * SDK's own code, never the vendor's, and it reports nothing.
 */
class WarmUpTest {

  static final String RESOURCE = "example.com/warm";

  final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  final ExecutorService workers = Executors.newSingleThreadExecutor();
  final List<String> vendorCalls = new CopyOnWriteArrayList<>();
  final List<DevicePluginException> errors = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() {
    timer.shutdownNow();
    workers.shutdownNow();
  }

  /** Records every call of vendor code the warm-up must not make. */
  final class Vendor implements DeviceBackend, Allocator, PreferredAllocator, PreStartHook {
    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      vendorCalls.add("devices");
      return List.of();
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      vendorCalls.add("allocate");
      return ContainerAllocation.builder().build();
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) {
      vendorCalls.add("preferredAllocation");
      return List.of();
    }

    @Override
    public void preStart(List<Device> devices) {
      vendorCalls.add("preStart");
    }
  }

  /** Nothing but devices: Allocate is answered from their declared allocations. */
  record Declarative() implements DeviceBackend {
    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return List.of();
    }
  }

  PluginEndpoint endpoint(DeviceBackend backend, List<Device> devices) {
    DeviceState state =
        new DeviceState(
            List.of(new V1Beta1Adapter("v1beta1")),
            Runnable::run,
            timer,
            Duration.ZERO,
            DeviceState.KUBELET_MAX_MESSAGE_BYTES,
            new DeviceState.Events() {
              @Override
              public void invalidDevices(InvalidBackendDataException error) {
                errors.add(error);
              }

              @Override
              public void tooLarge(InvalidBackendDataException error) {
                errors.add(error);
              }

              @Override
              public void changed(Snapshot snapshot) {}

              @Override
              public void streamsGone() {}
            });
    state.applyNow(devices);
    Duration deadline = Duration.ofSeconds(5);
    RequestHandler handler =
        new RequestHandler(
            RESOURCE,
            backend,
            state,
            workers,
            timer,
            new RequestDeadlines(deadline, deadline, deadline),
            errors::add);
    return new PluginEndpoint() {
      @Override
      public String resourceName() {
        return RESOURCE;
      }

      @Override
      public DeviceState devices() {
        return state;
      }

      @Override
      public RequestHandler requests() {
        return handler;
      }
    };
  }

  /**
   * Vendor calls are offloaded to the (single) worker: whatever was submitted has run after this.
   */
  void drainWorkers() throws Exception {
    workers.submit(() -> {}).get(10, TimeUnit.SECONDS);
  }

  static Device fpga(String id, Health health) {
    return Device.builder(id)
        .health(health)
        .deviceNode(new DeviceNode("/dev/" + id, "/dev/" + id, "rw"))
        .env("FPGA_PORT", id)
        .annotation("example.com/port", id)
        .cdiDevice("example.com/fpga=" + id)
        .build();
  }

  @Test
  void noAllocatorPreferredAllocatorOrPreStartHookIsCalled() throws Exception {
    PluginEndpoint plugin =
        endpoint(new Vendor(), List.of(fpga("p0", Health.HEALTHY), fpga("p1", Health.HEALTHY)));

    new V1Beta1Adapter("v1beta1").warmUp(plugin, 50);
    drainWorkers();

    assertThat(vendorCalls).isEmpty();
    assertThat(errors).isEmpty();
  }

  @Test
  void aDeclarativeAllocateRunsThroughTheServiceWithoutAnError() {
    PluginEndpoint plugin =
        endpoint(
            new Declarative(), List.of(fpga("p0", Health.UNHEALTHY), fpga("p1", Health.HEALTHY)));

    new V1Beta1Adapter("v1beta1").warmUp(plugin, 50);

    assertThat(errors).isEmpty();
    assertThat(plugin.requests().declarativeAllocate()).isTrue();
  }

  @Test
  void withNoHealthyDeviceOnlyTheMessagesAreExercised() throws Exception {
    PluginEndpoint plugin = endpoint(new Vendor(), List.of(fpga("p0", Health.UNHEALTHY)));

    new V1Beta1Adapter("v1beta1").warmUp(plugin, 10);
    new V1Beta1Adapter("v1beta1").warmUp(endpoint(new Declarative(), List.of()), 10);
    drainWorkers();

    assertThat(vendorCalls).isEmpty();
    assertThat(errors).isEmpty();
  }
}
