package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.InvalidRequestException;
import io.github.deviceplugin4j.core.PreStartHook;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Serves the kubelet's Allocate, GetPreferredAllocation and PreStartContainer for one resource,
 * independent of the API version: validates the request against the devices the kubelet was told
 * about, calls the backend with a deadline, validates the answer.
 */
public final class RequestHandler {

  /**
   * One container of a GetPreferredAllocation request.
   *
   * @param available the device IDs the kubelet may choose from
   * @param mustInclude the device IDs the answer must contain
   * @param size how many devices the answer must hold
   */
  public record PreferredQuery(List<String> available, List<String> mustInclude, int size) {
    /**
     * Copies the lists.
     *
     * @param available see {@link #available()}
     * @param mustInclude see {@link #mustInclude()}
     * @param size see {@link #size()}
     */
    public PreferredQuery {
      available = List.copyOf(available);
      mustInclude = List.copyOf(mustInclude);
    }
  }

  private final String resource;
  private final DeviceState state;
  private final Allocator allocator;
  private final PreferredAllocator preferredAllocator;
  private final PreStartHook preStartHook;
  private final ScheduledExecutorService timer;
  private final Duration timeout;
  private final Consumer<DevicePluginException> errors;

  /**
   * A request handler; capabilities are detected here, once.
   *
   * @param resource the resource name
   * @param backend the backend
   * @param state the device state
   * @param timer for deadlines
   * @param timeout deadline of each backend call
   * @param errors where failures are reported
   */
  public RequestHandler(
      String resource,
      DeviceBackend backend,
      DeviceState state,
      ScheduledExecutorService timer,
      Duration timeout,
      Consumer<DevicePluginException> errors) {
    this.resource = resource;
    this.state = state;
    this.allocator = backend instanceof Allocator a ? a : null;
    this.preferredAllocator = backend instanceof PreferredAllocator p ? p : null;
    this.preStartHook = backend instanceof PreStartHook h ? h : null;
    this.timer = timer;
    this.timeout = timeout;
    this.errors = errors;
  }

  /**
   * Whether the kubelet must call PreStartContainer: the backend implements {@link PreStartHook}.
   *
   * @return the advertised option
   */
  public boolean preStartRequired() {
    return preStartHook != null;
  }

  /**
   * Whether the kubelet may call GetPreferredAllocation: the backend implements {@link
   * PreferredAllocator}.
   *
   * @return the advertised option
   */
  public boolean preferredAllocationAvailable() {
    return preferredAllocator != null;
  }

  /**
   * Allocates devices for each container of a request.
   *
   * @param containers device IDs per container
   * @return one allocation per container, in order; or a typed failure
   */
  public CompletableFuture<List<ContainerAllocation>> allocate(List<List<String>> containers) {
    List<AllocationRequest> requests;
    try {
      if (containers.isEmpty()) {
        throw new InvalidRequestException(
            "Allocate for " + resource + " has no container requests", List.of());
      }
      Snapshot snapshot = state.current();
      requests = new ArrayList<>(containers.size());
      for (int i = 0; i < containers.size(); i++) {
        List<Device> devices =
            Validation.resolve(
                "Allocate container request " + i, resource, containers.get(i), snapshot, true);
        requests.add(new AllocationRequest(resource, devices, merged(devices)));
      }
    } catch (DevicePluginException e) {
      return failed(e);
    }
    if (allocator == null) {
      // Devices were validated when published, so their merged allocation is valid.
      return CompletableFuture.completedFuture(
          requests.stream().map(AllocationRequest::defaultAllocation).toList());
    }
    return callBackend(
        "Allocate",
        () -> {
          List<ContainerAllocation> answers = new ArrayList<>(requests.size());
          for (int i = 0; i < requests.size(); i++) {
            ContainerAllocation answer = allocator.allocate(requests.get(i));
            if (answer == null) {
              throw new InvalidBackendDataException(
                  "Allocate", List.of("the allocator returned null for container request " + i));
            }
            List<String> problems = Validation.allocationProblems(answer);
            if (!problems.isEmpty()) {
              int index = i;
              throw new InvalidBackendDataException(
                  "Allocate",
                  problems.stream().map(p -> "container request " + index + ": " + p).toList());
            }
            answers.add(answer);
          }
          return answers;
        });
  }

  /** The devices' own allocations merged; one device's is its own, as declared, with no copy. */
  private static ContainerAllocation merged(List<Device> devices) {
    if (devices.size() == 1) {
      return devices.get(0).allocation();
    }
    ContainerAllocation.Builder merged = ContainerAllocation.builder();
    devices.forEach(d -> merged.merge(d.allocation()));
    return merged.build();
  }

  /**
   * Chooses preferred devices for each container of a request.
   *
   * @param queries one per container
   * @return the chosen IDs per container
   */
  public CompletableFuture<List<List<String>>> preferred(List<PreferredQuery> queries) {
    if (preferredAllocator == null) {
      return failed(
          new InvalidRequestException(
              "GetPreferredAllocation called for "
                  + resource
                  + ", but the plugin does not advertise it (its backend does not implement"
                  + " PreferredAllocator)",
              List.of()));
    }
    List<PreferredAllocationRequest> requests = new ArrayList<>(queries.size());
    List<Set<String>> availableSets = new ArrayList<>(queries.size());
    try {
      if (queries.isEmpty()) {
        throw new InvalidRequestException(
            "GetPreferredAllocation for " + resource + " has no container requests", List.of());
      }
      Snapshot snapshot = state.current();
      for (int i = 0; i < queries.size(); i++) {
        PreferredQuery q = queries.get(i);
        String what = "GetPreferredAllocation container request " + i;
        List<Device> available = Validation.resolve(what, resource, q.available(), snapshot, true);
        Set<String> availableIds = new HashSet<>(q.available());
        Set<String> outside = new LinkedHashSet<>();
        for (String id : q.mustInclude()) {
          if (!availableIds.contains(id)) {
            outside.add(id);
          }
        }
        if (!outside.isEmpty()) {
          throw new InvalidRequestException(
              what
                  + " for "
                  + resource
                  + ": must-include devices "
                  + Validation.quote(outside)
                  + " are not among the available ones",
              List.copyOf(outside));
        }
        List<Device> must =
            q.mustInclude().isEmpty()
                ? List.of()
                : Validation.resolve(what, resource, q.mustInclude(), snapshot, true);
        if (q.size() < 1 || q.size() > available.size() || q.size() < must.size()) {
          throw new InvalidRequestException(
              what
                  + " for "
                  + resource
                  + ": allocation size "
                  + q.size()
                  + " does not fit "
                  + available.size()
                  + " available and "
                  + must.size()
                  + " must-include devices",
              List.of());
        }
        requests.add(new PreferredAllocationRequest(resource, available, must, q.size()));
        availableSets.add(availableIds);
      }
    } catch (DevicePluginException e) {
      return failed(e);
    }
    return callBackend(
        "GetPreferredAllocation",
        () -> {
          List<List<String>> answers = new ArrayList<>(requests.size());
          for (int i = 0; i < requests.size(); i++) {
            List<String> answer = preferredAllocator.preferredAllocation(requests.get(i));
            List<String> problems =
                preferredProblems(requests.get(i), answer, availableSets.get(i));
            if (!problems.isEmpty()) {
              int index = i;
              throw new InvalidBackendDataException(
                  "GetPreferredAllocation",
                  problems.stream().map(p -> "container request " + index + ": " + p).toList());
            }
            answers.add(List.copyOf(answer));
          }
          return answers;
        });
  }

  /**
   * Checks a preferred-allocation answer: exactly {@code size} distinct available IDs including
   * every must-include one.
   *
   * @param request the request
   * @param answer the answer
   * @return problems; empty when fine
   */
  public static List<String> preferredProblems(
      PreferredAllocationRequest request, List<String> answer) {
    return preferredProblems(request, answer, new HashSet<>(request.availableIds()));
  }

  /**
   * {@link #preferredProblems(PreferredAllocationRequest, List)} with the available IDs at hand.
   */
  private static List<String> preferredProblems(
      PreferredAllocationRequest request, List<String> answer, Set<String> available) {
    List<String> problems = new ArrayList<>();
    if (answer == null) {
      problems.add("the answer is null");
      return problems;
    }
    Set<String> seen = new HashSet<>();
    Set<String> repeated = new LinkedHashSet<>();
    Set<String> outside = new LinkedHashSet<>();
    for (String id : answer) {
      if (id == null || !available.contains(id)) {
        outside.add(String.valueOf(id));
      } else if (!seen.add(id)) {
        repeated.add(id);
      }
    }
    if (!outside.isEmpty()) {
      problems.add("answer names devices outside the available ones " + Validation.quote(outside));
    }
    if (!repeated.isEmpty()) {
      problems.add("answer repeats devices " + Validation.quote(repeated));
    }
    Set<String> missing = new LinkedHashSet<>(request.mustIncludeIds());
    missing.removeAll(seen);
    if (!missing.isEmpty()) {
      problems.add("answer leaves out must-include devices " + Validation.quote(missing));
    }
    if (answer.size() != request.size()) {
      problems.add(
          "answer has " + answer.size() + " devices, the kubelet asked for " + request.size());
    }
    return problems;
  }

  /**
   * Runs the pre-start hook for a container's devices.
   *
   * @param ids the devices
   * @return completes when the hook succeeded
   */
  public CompletableFuture<Void> preStart(List<String> ids) {
    List<Device> devices;
    try {
      devices = Validation.resolve("PreStartContainer", resource, ids, state.current(), true);
    } catch (DevicePluginException e) {
      return failed(e);
    }
    if (preStartHook == null) {
      return CompletableFuture.completedFuture(null);
    }
    return callBackend(
        "PreStartContainer",
        () -> {
          preStartHook.preStart(devices);
          return null;
        });
  }

  private <T> CompletableFuture<T> failed(DevicePluginException e) {
    errors.accept(e);
    return CompletableFuture.failedFuture(e);
  }

  /**
   * Calls the backend on the calling thread (a gRPC executor thread, never an event loop), with a
   * deadline: when it passes, the future fails at once with {@code DEADLINE_EXCEEDED} (so the
   * kubelet gets its answer) and the calling thread is interrupted, but only while it is still
   * inside the backend. Running inline saves a hand-off to another thread on every call; a backend
   * that hangs holds this thread instead of another thread of the same pool.
   */
  private <T> CompletableFuture<T> callBackend(String operation, Callable<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    InlineCall inline = new InlineCall(Thread.currentThread());
    ScheduledFuture<?> deadline;
    try {
      deadline =
          timer.schedule(
              () -> {
                boolean timedOut =
                    result.completeExceptionally(
                        new BackendException(
                            operation,
                            "the backend did not answer "
                                + operation
                                + " for "
                                + resource
                                + " within "
                                + timeout.toMillis()
                                + " ms (allocationTimeout)",
                            null,
                            true));
                if (timedOut) {
                  inline.interrupt();
                }
              },
              timeout.toNanos(),
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException shuttingDown) {
      return failed(new BackendException(operation, "the plugin is shutting down", shuttingDown));
    }
    CompletableFuture<T> answered =
        result.whenComplete(
            (value, error) -> {
              deadline.cancel(false);
              if (error != null) {
                errors.accept(unwrap(error));
              }
            });
    try {
      result.complete(call.call());
    } catch (Throwable t) {
      result.completeExceptionally(wrap(operation, t));
    } finally {
      inline.done();
    }
    return answered;
  }

  /** The thread running a backend call inline, interruptible only while it is in the call. */
  private static final class InlineCall {
    private final Thread thread;
    private boolean running = true;
    private boolean interrupted;

    InlineCall(Thread thread) {
      this.thread = thread;
    }

    synchronized void interrupt() {
      if (running) {
        interrupted = true;
        thread.interrupt();
      }
    }

    /** Leaves the call; an interrupt meant for it must not reach the thread's next task. */
    synchronized void done() {
      running = false;
      if (interrupted) {
        Thread.interrupted();
      }
    }
  }

  private DevicePluginException wrap(String operation, Throwable t) {
    Throwable cause = t;
    if (cause instanceof ExecutionException || cause instanceof CompletionException) {
      cause = cause.getCause() == null ? cause : cause.getCause();
    }
    if (cause instanceof DevicePluginException e) {
      return e;
    }
    return new BackendException(
        operation,
        "the backend failed in "
            + operation
            + " for "
            + resource
            + ": "
            + cause.getClass().getSimpleName()
            + (cause.getMessage() == null ? "" : ": " + cause.getMessage()),
        cause);
  }

  /**
   * The typed exception inside a future's failure.
   *
   * @param error a failure
   * @return the exception the core maps to a status
   */
  public static DevicePluginException unwrap(Throwable error) {
    Throwable t = error;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof DevicePluginException e) {
      return e;
    }
    return new DevicePluginException("unexpected error: " + t, t);
  }
}
