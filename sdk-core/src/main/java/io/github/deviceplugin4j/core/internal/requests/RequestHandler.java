package io.github.deviceplugin4j.core.internal.requests;

import io.github.deviceplugin4j.core.AllocationPolicies;
import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.Capabilities;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.InvalidRequestException;
import io.github.deviceplugin4j.core.NonBlocking;
import io.github.deviceplugin4j.core.PreStartHook;
import io.github.deviceplugin4j.core.PreStartRequest;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import io.github.deviceplugin4j.core.Sharing;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import io.github.deviceplugin4j.core.internal.state.Snapshot;
import io.github.deviceplugin4j.core.internal.state.Validation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Serves the kubelet's Allocate, GetPreferredAllocation and PreStartContainer for one resource,
 * independent of the API version: validates the request against the devices the kubelet was told
 * about, calls the backend with a deadline, validates the answer.
 */
public final class RequestHandler {

  /**
   * One container of a GetPreferredAllocation request: the device IDs the kubelet may choose from,
   * those the answer must contain, and how many devices it must hold.
   */
  public record PreferredQuery(List<String> available, List<String> mustInclude, int size) {
    /** Copies the lists. */
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
  private final Sharing sharing;
  private final boolean allocatorInline;
  private final boolean preferredInline;
  private final boolean preStartInline;
  private final Executor workers;
  private final ScheduledExecutorService timer;
  private final RequestDeadlines deadlines;
  private final Consumer<DevicePluginException> errors;

  /**
   * A request handler; capabilities given on the builder win over the backend's own, and each
   * capability's {@link NonBlocking} mark is read, once, from the object that provides it. Backend
   * calls that may block run on {@code workers}; failures are reported to {@code errors} on a
   * worker thread.
   */
  public RequestHandler(
      String resource,
      DeviceBackend backend,
      Capabilities capabilities,
      DeviceState state,
      Executor workers,
      ScheduledExecutorService timer,
      RequestDeadlines deadlines,
      Consumer<DevicePluginException> errors) {
    this.resource = resource;
    this.state = state;
    this.allocator = capabilities.allocator().orElse(backend instanceof Allocator a ? a : null);
    this.sharing = capabilities.sharing();
    this.preferredAllocator =
        capabilities
            .preferredAllocator()
            .orElse(backend instanceof PreferredAllocator p ? p : sharingPolicy(sharing));
    this.preStartHook =
        capabilities.preStartHook().orElse(backend instanceof PreStartHook h ? h : null);
    this.allocatorInline =
        allocator != null && nonBlocking(allocator, "allocate", AllocationRequest.class);
    this.preferredInline =
        preferredAllocator != null
            && nonBlocking(
                preferredAllocator, "preferredAllocation", PreferredAllocationRequest.class);
    this.preStartInline =
        preStartHook != null
            && (nonBlocking(preStartHook, "preStart", List.class)
                || nonBlocking(preStartHook, "preStart", PreStartRequest.class));
    this.workers = workers;
    this.timer = timer;
    this.deadlines = deadlines;
    this.errors = errors;
  }

  /** A shared resource's default preferred allocation; null when not shared. */
  private static PreferredAllocator sharingPolicy(Sharing sharing) {
    if (!sharing.isShared()) {
      return null;
    }
    return sharing.isPacked()
        ? AllocationPolicies.replicasPacked()
        : AllocationPolicies.replicasSpread();
  }

  /**
   * Whether a backend declares a capability's method {@link NonBlocking}, on the method or on its
   * class: then the core may call it on the event loop.
   */
  static boolean nonBlocking(Object backend, String method, Class<?> parameter) {
    Class<?> type = backend.getClass();
    if (type.isAnnotationPresent(NonBlocking.class)) {
      return true;
    }
    try {
      return type.getMethod(method, parameter).isAnnotationPresent(NonBlocking.class);
    } catch (NoSuchMethodException | SecurityException e) {
      return false;
    }
  }

  /**
   * Whether the kubelet must call PreStartContainer: the backend implements {@link PreStartHook}.
   */
  public boolean preStartRequired() {
    return preStartHook != null;
  }

  /**
   * Whether the kubelet may call GetPreferredAllocation: the backend implements {@link
   * PreferredAllocator}, or the resource is shared.
   */
  public boolean preferredAllocationAvailable() {
    return preferredAllocator != null;
  }

  /**
   * Whether Allocate is answered from the devices' declared allocations alone (no {@link
   * Allocator}): then an Allocate runs no vendor code and has no effect beyond its answer.
   */
  public boolean declarativeAllocate() {
    return allocator == null;
  }

  /**
   * Allocates devices for each container of a request. Validation and a declarative answer (no
   * {@link Allocator}) complete on the calling thread; an {@link Allocator} runs on a worker thread
   * with its deadline unless declared {@link NonBlocking}. Completes with one allocation per
   * container, in order, or a typed failure.
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
        String what = "Allocate container request " + i;
        List<Device> devices =
            physical(
                what,
                Validation.resolve(what, resource, containers.get(i), snapshot, true),
                snapshot);
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
        "allocateDeadline",
        deadlines.allocate(),
        allocatorInline,
        true,
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

  /**
   * The physical devices of the replicas a container was given, each once, in request order; the
   * devices themselves when not shared. More than one replica when a container may have only one is
   * an {@link InvalidRequestException}.
   */
  private List<Device> physical(String what, List<Device> advertised, Snapshot snapshot) {
    if (!sharing.isShared()) {
      return advertised;
    }
    if (sharing.isOneReplicaPerContainer() && advertised.size() > 1) {
      List<String> ids = advertised.stream().map(Device::id).toList();
      throw new InvalidRequestException(
          what
              + " for "
              + resource
              + " asks for "
              + advertised.size()
              + " replicas "
              + Validation.quote(ids)
              + ", but this resource gives a container at most one replica"
              + " (Sharing.oneReplicaPerContainer()): request 1 in the pod's resources",
          ids);
    }
    return distinctPhysical(advertised, snapshot);
  }

  /** The physical device of each known replica, each device once, in the replicas' order. */
  private static List<Device> distinctPhysical(List<Device> replicas, Snapshot snapshot) {
    Map<String, Device> devices = new java.util.LinkedHashMap<>();
    for (Device replica : replicas) {
      Device d = snapshot.physicalOf(replica.id());
      devices.putIfAbsent(d.id(), d);
    }
    return new ArrayList<>(devices.values());
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
   * One container of a GetPreferredAllocation request, repaired: what the vendor policy is asked
   * (null when the request cannot be put to it), and what a fallback answer is made of.
   */
  private record PreferredPlan(
      PreferredAllocationRequest request,
      List<String> mustIds,
      Set<String> availableIds,
      int size,
      Snapshot snapshot) {

    /**
     * A valid-as-can-be answer, computed only when needed: every must-include ID first, then
     * available devices in the order the plugin advertises them, until {@code size} are chosen.
     */
    List<String> fallback() {
      Stream<String> advertised = snapshot.devices().stream().map(Device::id);
      return Stream.concat(mustIds.stream(), advertised.filter(availableIds::contains))
          .distinct()
          .limit(Math.max(size, mustIds.size()))
          .toList();
    }
  }

  /**
   * Chooses preferred devices for each container of a request. Never fails for what can be
   * repaired, since an error fails the pod's admission while the kubelet tolerates any answer:
   * unknown or unhealthy available IDs are ignored, every must-include ID is kept, and when the
   * vendor policy cannot be asked, fails, passes its deadline or answers something invalid, the
   * answer is a valid fallback (must-include IDs first, then available devices in the order the
   * plugin advertises them), reported as an error (logged, rate-limited).
   */
  public CompletableFuture<List<List<String>>> preferred(List<PreferredQuery> queries) {
    Snapshot snapshot = state.current();
    List<PreferredPlan> plans = new ArrayList<>(queries.size());
    List<String> repairs = new ArrayList<>();
    for (int i = 0; i < queries.size(); i++) {
      plans.add(plan(i, queries.get(i), snapshot, repairs));
    }
    if (!repairs.isEmpty()) {
      report(
          new InvalidRequestException(
              "GetPreferredAllocation for "
                  + resource
                  + " answered with a fallback choice: "
                  + String.join("; ", repairs),
              List.of()));
    }
    // Without a PreferredAllocator the kubelet does not call this (the option is not advertised);
    // if something does, a fallback answers it.
    boolean askVendor =
        preferredAllocator != null && plans.stream().anyMatch(p -> p.request() != null);
    if (!askVendor) {
      return CompletableFuture.completedFuture(
          plans.stream().map(PreferredPlan::fallback).toList());
    }
    return callBackend(
            "GetPreferredAllocation",
            "preferredAllocationDeadline",
            deadlines.preferred(),
            preferredInline,
            false,
            () -> {
              List<List<String>> answers = new ArrayList<>(plans.size());
              List<String> problems = new ArrayList<>();
              for (int i = 0; i < plans.size(); i++) {
                answers.add(ask(i, plans.get(i), problems));
              }
              if (!problems.isEmpty()) {
                report(
                    new InvalidBackendDataException(
                        "GetPreferredAllocation",
                        problems.stream()
                            .map(p -> p + "; answered with a fallback choice")
                            .toList()));
              }
              return answers;
            })
        .exceptionally(
            error -> {
              DevicePluginException e = unwrap(error);
              boolean timedOut = e instanceof BackendException b && b.timedOut();
              report(
                  new BackendException(
                      "GetPreferredAllocation",
                      e.getMessage() + "; answered with a fallback choice",
                      timedOut || e.getCause() != null ? e.getCause() : e,
                      timedOut));
              return plans.stream().map(PreferredPlan::fallback).toList();
            });
  }

  /** Asks the vendor policy about one container; its answer when valid, else the fallback. */
  private List<String> ask(int index, PreferredPlan plan, List<String> problems) throws Exception {
    if (plan.request() == null) {
      return plan.fallback();
    }
    List<String> answer = preferredAllocator.preferredAllocation(plan.request());
    List<String> found = preferredProblems(plan.request(), answer, plan.availableIds());
    if (!found.isEmpty()) {
      problems.add("container request " + index + ": " + String.join(", ", found));
      return plan.fallback();
    }
    return List.copyOf(answer);
  }

  /**
   * Repairs one container's query: what the vendor policy may be asked, and the fallback answer.
   */
  private PreferredPlan plan(int index, PreferredQuery q, Snapshot snapshot, List<String> repairs) {
    Map<String, Device> byId = snapshot.byId();
    List<String> mustIds =
        q.mustInclude().isEmpty() ? List.of() : List.copyOf(new LinkedHashSet<>(q.mustInclude()));
    Set<String> mustSet = mustIds.isEmpty() ? Set.of() : new HashSet<>(mustIds);
    List<Device> must = new ArrayList<>(mustIds.size());
    List<String> unknownMust = new ArrayList<>();
    for (String id : mustIds) {
      Device d = byId.get(id);
      if (d == null) {
        unknownMust.add(id);
      } else {
        must.add(d);
      }
    }
    // Available: known devices that are healthy, or must be included anyway; kubelet's order.
    List<Device> available = new ArrayList<>(q.available().size() + must.size());
    Set<String> availableIds = new HashSet<>();
    for (String id : q.available()) {
      Device d = byId.get(id);
      if (d != null && (d.isHealthy() || mustSet.contains(id)) && availableIds.add(id)) {
        available.add(d);
      }
    }
    for (Device d : must) {
      if (availableIds.add(d.id())) {
        available.add(d);
      }
    }
    String what = "container request " + index;
    String problem = null;
    if (!unknownMust.isEmpty()) {
      problem = what + " must include unknown devices " + Validation.quote(unknownMust);
    } else if (q.size() < 1) {
      problem = what + " asks for " + q.size() + " devices";
    } else if (q.size() < must.size()) {
      problem =
          what + " asks for " + q.size() + " devices but must include " + must.size() + " devices";
    } else if (q.size() > available.size()) {
      problem =
          what
              + " asks for "
              + q.size()
              + " devices but only "
              + available.size()
              + " of the available ones are known and healthy";
    }
    if (problem != null) {
      repairs.add(problem);
    }
    PreferredAllocationRequest request =
        problem == null
            ? new PreferredAllocationRequest(resource, available, must, q.size())
            : null;
    return new PreferredPlan(request, mustIds, availableIds, q.size(), snapshot);
  }

  /**
   * Checks a preferred-allocation answer: exactly {@code size} distinct available IDs including
   * every must-include one. Problems; empty when fine.
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
    if (answer == null) {
      return List.of("the answer is null");
    }
    List<String> problems = new ArrayList<>();
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
   * Runs the pre-start hook for a container's devices. Only malformed requests are refused (no IDs,
   * an empty, over-long or control-character ID, a repeated ID): the kubelet calls this before
   * every container start, never checks health and cannot recover from a refusal, so unhealthy and
   * unknown devices reach the hook, which alone may refuse. Without a hook it succeeds. Replicas of
   * a shared resource reach the hook as their physical devices, each once.
   */
  public CompletableFuture<Void> preStart(List<String> ids) {
    PreStartRequest request;
    try {
      request = preStartRequest(ids);
    } catch (DevicePluginException e) {
      return failed(e);
    }
    if (preStartHook == null) {
      return CompletableFuture.completedFuture(null);
    }
    return callBackend(
        "PreStartContainer",
        "preStartDeadline",
        deadlines.preStart(),
        preStartInline,
        true,
        () -> {
          preStartHook.preStart(request);
          return null;
        });
  }

  private PreStartRequest preStartRequest(List<String> ids) {
    String what = "PreStartContainer";
    if (ids.isEmpty()) {
      throw new InvalidRequestException(what + " for " + resource + " names no devices", List.of());
    }
    Snapshot snapshot = state.current();
    Map<String, Device> byId = snapshot.byId();
    List<Device> devices = new ArrayList<>(ids.size());
    List<String> unknown = List.of();
    Set<String> seen = ids.size() == 1 ? null : new HashSet<>(ids.size() * 2);
    List<String> malformed = null;
    Set<String> repeated = null;
    for (String id : ids) {
      String problem = Validation.deviceIdProblem(id);
      if (problem != null) {
        malformed = malformed == null ? new ArrayList<>() : malformed;
        malformed.add(problem);
        continue;
      }
      if (seen != null && !seen.add(id)) {
        repeated = repeated == null ? new LinkedHashSet<>() : repeated;
        repeated.add(id);
        continue;
      }
      Device d = byId.get(id);
      if (d != null) {
        devices.add(d);
      } else {
        unknown = unknown.isEmpty() ? new ArrayList<>() : unknown;
        unknown.add(id);
      }
    }
    if (sharing.isShared()) {
      devices = distinctPhysical(devices, snapshot);
    }
    if (malformed != null) {
      throw new InvalidRequestException(
          what
              + " for "
              + resource
              + " names malformed device IDs: "
              + String.join("; ", malformed.subList(0, Math.min(5, malformed.size())))
              + (malformed.size() > 5 ? "; ... and " + (malformed.size() - 5) + " more" : ""),
          List.of());
    }
    if (repeated != null) {
      throw new InvalidRequestException(
          what + " for " + resource + " repeats device IDs " + Validation.quote(repeated),
          List.copyOf(repeated));
    }
    return new PreStartRequest(resource, devices, unknown);
  }

  private <T> CompletableFuture<T> failed(DevicePluginException e) {
    report(e);
    return CompletableFuture.failedFuture(e);
  }

  /**
   * Reports a failure on a worker thread: the caller may be the event loop, and reporting runs the
   * vendor's listeners.
   */
  private void report(DevicePluginException e) {
    try {
      workers.execute(() -> errors.accept(e));
    } catch (RejectedExecutionException shuttingDown) {
      errors.accept(e);
    }
  }

  /**
   * Calls the backend with a deadline. A call declared {@link NonBlocking} runs on the calling
   * thread (the event loop), without a deadline. Any other runs on a worker thread: when the
   * deadline passes, the future fails at once with {@code DEADLINE_EXCEEDED} (so the kubelet gets
   * its answer) and the worker is interrupted, but only while it is still inside the backend; the
   * event loop never waits for it. {@code option} is the builder option that sets the deadline,
   * named in the timeout message; {@code reportFailure}: a failure is reported here, else by the
   * caller.
   */
  private <T> CompletableFuture<T> callBackend(
      String operation,
      String option,
      Duration timeout,
      boolean inline,
      boolean reportFailure,
      Callable<T> call) {
    if (inline) {
      try {
        return CompletableFuture.completedFuture(call.call());
      } catch (Throwable t) {
        DevicePluginException e = wrap(operation, t);
        if (reportFailure) {
          report(e);
        }
        return CompletableFuture.failedFuture(e);
      }
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    OffloadedCall running = new OffloadedCall();
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
                                + " ms ("
                                + option
                                + ")",
                            null,
                            true));
                if (timedOut) {
                  running.interrupt();
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
              if (error != null && reportFailure) {
                errors.accept(unwrap(error));
              }
            });
    try {
      workers.execute(
          () -> {
            if (result.isDone() || !running.enter()) {
              return; // the deadline passed before a worker took the call
            }
            try {
              result.complete(call.call());
            } catch (Throwable t) {
              result.completeExceptionally(wrap(operation, t));
            } finally {
              running.done();
            }
          });
    } catch (RejectedExecutionException shuttingDown) {
      result.completeExceptionally(
          new BackendException(operation, "the plugin is shutting down", shuttingDown));
    }
    return answered;
  }

  /** The worker thread running a backend call, interruptible only while it is in the call. */
  private static final class OffloadedCall {
    private Thread thread;
    private boolean finished;
    private boolean interrupted;

    /** Enters the call on the current thread; false when the deadline passed already. */
    synchronized boolean enter() {
      if (finished) {
        return false;
      }
      thread = Thread.currentThread();
      return true;
    }

    synchronized void interrupt() {
      if (thread != null && !finished) {
        interrupted = true;
        thread.interrupt();
      }
      finished = true;
    }

    /** Leaves the call; an interrupt meant for it must not reach the thread's next task. */
    synchronized void done() {
      finished = true;
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
        "the backend failed in " + operation + " for " + resource + ": " + Loggers.describe(cause),
        cause);
  }

  /** The typed exception inside a future's failure, which the core maps to a status. */
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
