package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.requests.RequestDeadlines;
import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import io.github.deviceplugin4j.core.internal.requests.V1Beta1Adapter;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import io.github.deviceplugin4j.core.internal.state.Snapshot;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Backend calls that may block run on a worker thread under a deadline: the deadline answers the
 * kubelet at once and interrupts the call, and the interrupt never outlives the call. Calls
 * declared {@link NonBlocking} run on the calling thread. Deadlines run on a {@link ManualTimer}:
 * one passes when the test moves the clock, never because the machine was slow.
 */
class BackendCallTest {

  static final String RESOURCE = "example.com/inline";

  final ManualTimer timer = new ManualTimer();
  final ExecutorService workers = Executors.newSingleThreadExecutor();
  DeviceState state;
  final List<DevicePluginException> errors = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
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
            },
            "",
            Observers.NONE,
            null);
    state.applyNow(List.of(Device.healthy("d0")));
  }

  @AfterEach
  void tearDown() {
    timer.shutdownNow();
    workers.shutdownNow();
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

  /** The same, declared {@link NonBlocking}. */
  record InlineBackend(Allocator body) implements DeviceBackend, Allocator {
    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return List.of(Device.healthy("d0"));
    }

    @NonBlocking
    @Override
    public ContainerAllocation allocate(AllocationRequest request) throws Exception {
      return body.allocate(request);
    }
  }

  RequestHandler handlerOf(DeviceBackend backend, Duration timeout) {
    return new RequestHandler(
        RESOURCE,
        backend,
        Capabilities.none(),
        state,
        workers,
        timer,
        new RequestDeadlines(timeout, timeout, timeout),
        errors::add);
  }

  RequestHandler handler(Allocator body, Duration timeout) {
    return handlerOf(new Backend(body), timeout);
  }

  @Test
  void anUndeclaredAllocatorRunsOnAWorkerThreadNotTheCallingOne() {
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
    assertThat(f.join()).hasSize(1);
    assertThat(ran).hasSize(1).doesNotContain(caller);
    assertThat(errors).isEmpty();
  }

  @Test
  void aNonBlockingAllocatorRunsOnTheCallingThreadWithoutADeadline() {
    Thread caller = Thread.currentThread();
    List<Thread> ran = new CopyOnWriteArrayList<>();
    CompletableFuture<List<ContainerAllocation>> f =
        handlerOf(
                new InlineBackend(
                    r -> {
                      ran.add(Thread.currentThread());
                      return r.defaultAllocation();
                    }),
                Duration.ofSeconds(10))
            .allocate(List.of(List.of("d0")));
    assertThat(f).isCompleted();
    assertThat(ran).containsExactly(caller);
    assertThat(timer.scheduled()).as("deadlines scheduled").isZero();
  }

  @Test
  void aDeadlineFailsTheCallInterruptsTheBackendAndTheInterruptDoesNotLeak() throws Exception {
    // The backend ignores interrupts (it only looks at the flag, which it leaves set): without
    // the core clearing it, the worker's next task would start interrupted.
    CountDownLatch inside = new CountDownLatch(1);
    CompletableFuture<List<ContainerAllocation>> f =
        handler(
                r -> {
                  inside.countDown();
                  while (!Thread.currentThread().isInterrupted()) {
                    Thread.onSpinWait();
                  }
                  return r.defaultAllocation();
                },
                Duration.ofMillis(50))
            .allocate(List.of(List.of("d0")));
    assertThat(inside.await(10, TimeUnit.SECONDS)).as("the backend was called").isTrue();
    assertThat(timer.advance(Duration.ofMillis(49))).as("fired before the deadline").isZero();
    assertThat(f).isNotDone();
    assertThat(timer.advance(Duration.ofMillis(1))).isEqualTo(1);
    assertThat(RequestHandler.unwrap(f.handle((v, e) -> e).get(10, TimeUnit.SECONDS)))
        .isInstanceOf(BackendException.class)
        .hasMessageContaining(
            "did not answer Allocate for " + RESOURCE + " within 50 ms (allocateDeadline)");
    Future<Boolean> next = workers.submit(() -> Thread.currentThread().isInterrupted());
    assertThat(next.get(10, TimeUnit.SECONDS)).as("interrupt leaked to the next task").isFalse();
    assertThat(errors).hasSize(1);
  }

  @Test
  void aCallWhoseDeadlinePassedBeforeAWorkerTookItNeverRuns() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    workers.execute(
        () -> {
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    List<Thread> ran = new CopyOnWriteArrayList<>();
    CompletableFuture<List<ContainerAllocation>> f =
        handler(
                r -> {
                  ran.add(Thread.currentThread());
                  return r.defaultAllocation();
                },
                Duration.ofMillis(20))
            .allocate(List.of(List.of("d0")));
    timer.advance(Duration.ofMillis(20));
    assertThat(RequestHandler.unwrap(f.handle((v, e) -> e).get(10, TimeUnit.SECONDS)))
        .isInstanceOf(BackendException.class);
    release.countDown();
    workers.submit(() -> {}).get(10, TimeUnit.SECONDS);
    assertThat(ran).as("the late call is dropped, not run").isEmpty();
  }

  @Test
  void aCallAnsweredInTimeIsNeverInterruptedLater() throws Exception {
    RequestHandler h = handler(AllocationRequest::defaultAllocation, Duration.ofMillis(20));
    for (int i = 0; i < 20; i++) {
      assertThat(h.allocate(List.of(List.of("d0"))).get(10, TimeUnit.SECONDS)).hasSize(1);
    }
    assertThat(timer.scheduled()).as("one deadline per call").isEqualTo(20);
    assertThat(timer.pending()).as("deadlines left after the answers").isZero();
    // Whatever a cancelled deadline would have done, it would have done by now.
    assertThat(timer.advance(Duration.ofSeconds(1))).isZero();
    Future<Boolean> next = workers.submit(() -> Thread.currentThread().isInterrupted());
    assertThat(next.get(10, TimeUnit.SECONDS)).isFalse();
    assertThat(errors).isEmpty();
  }
}
