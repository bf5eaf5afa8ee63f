package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.DeviceState;
import io.github.deviceplugin4j.core.internal.RequestHandler;
import io.github.deviceplugin4j.core.internal.Snapshot;
import io.github.deviceplugin4j.core.internal.V1Beta1Adapter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Backend calls run on the calling gRPC thread, under a deadline: the deadline answers the kubelet
 * at once and interrupts the call, and the interrupt never outlives the call.
 */
class InlineBackendCallTest {

  static final String RESOURCE = "example.com/inline";

  ScheduledThreadPoolExecutor timer;
  DeviceState state;
  final List<DevicePluginException> errors = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
    timer = new ScheduledThreadPoolExecutor(1);
    timer.setRemoveOnCancelPolicy(true);
    state =
        new DeviceState(
            List.of(new V1Beta1Adapter("v1beta1")),
            Runnable::run,
            timer,
            Duration.ZERO,
            DeviceState.KUBELET_MAX_MESSAGE_BYTES,
            new DeviceState.Events() {
              @Override
              public void invalidDevices(InvalidBackendDataException error) {}

              @Override
              public void tooLarge(InvalidBackendDataException error) {}

              @Override
              public void changed(Snapshot snapshot) {}

              @Override
              public void streamsGone() {}
            });
    state.applyNow(List.of(Device.healthy("d0")));
  }

  @AfterEach
  void tearDown() {
    timer.shutdownNow();
    Thread.interrupted();
  }

  /** A backend whose Allocate runs a given body. */
  record Backend(Allocator body) implements DeviceBackend, Allocator {
    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return List.of(Device.healthy("d0"));
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) throws Exception {
      return body.allocate(request);
    }
  }

  RequestHandler handler(Allocator body, Duration timeout) {
    return new RequestHandler(RESOURCE, new Backend(body), state, timer, timeout, errors::add);
  }

  @Test
  void answersOnTheCallingThreadWithoutAHandOff() {
    Thread caller = Thread.currentThread();
    List<Thread> ran = new CopyOnWriteArrayList<>();
    CompletableFuture<List<ContainerAllocation>> f =
        handler(
                r -> {
                  ran.add(Thread.currentThread());
                  return r.defaultAllocation();
                },
                Duration.ofSeconds(10))
            .allocate(List.of(List.of("d0")));
    assertThat(f).isCompleted();
    assertThat(ran).containsExactly(caller);
    assertThat(timer.getQueue()).as("the deadline is cancelled once answered").isEmpty();
    assertThat(errors).isEmpty();
  }

  @Test
  void aDeadlineFailsTheCallInterruptsTheBackendAndTheInterruptDoesNotLeak() {
    // The backend ignores interrupts (it only looks at the flag, which it leaves set): without
    // the core clearing it, the thread's next task would start interrupted.
    CompletableFuture<List<ContainerAllocation>> f =
        handler(
                r -> {
                  long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                  while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                  }
                  assertThat(Thread.currentThread().isInterrupted())
                      .as("interrupted by the deadline")
                      .isTrue();
                  return r.defaultAllocation();
                },
                Duration.ofMillis(50))
            .allocate(List.of(List.of("d0")));
    assertThat(f).isCompletedExceptionally();
    assertThat(RequestHandler.unwrap(f.handle((v, e) -> e).join()))
        .isInstanceOf(BackendException.class)
        .hasMessageContaining("did not answer Allocate for " + RESOURCE + " within 50 ms");
    assertThat(Thread.currentThread().isInterrupted()).as("interrupt leaked").isFalse();
    assertThat(errors).hasSize(1);
  }

  @Test
  void aCallAnsweredInTimeIsNeverInterruptedLater() throws Exception {
    RequestHandler h = handler(AllocationRequest::defaultAllocation, Duration.ofMillis(20));
    for (int i = 0; i < 20; i++) {
      assertThat(h.allocate(List.of(List.of("d0")))).isCompleted();
    }
    // Any deadline that was not cancelled would fire within 20 ms: let them all pass.
    assertThat(timer.getQueue()).isEmpty();
    timer.schedule(() -> {}, 40, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    assertThat(errors).isEmpty();
  }
}
