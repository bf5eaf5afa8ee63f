package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.ManagedChannel;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A fake kubelet: the device manager's side of the device plugin API over real Unix sockets and
 * real gRPC, with the real kubelet's validation, timeouts and state rules. One per test, started in
 * milliseconds, {@link AutoCloseable}.
 *
 * <pre>{@code
 * try (FakeKubelet kubelet = FakeKubelet.start(tempDir)) {
 *   plugin.start();                                            // registers on tempDir/kubelet.sock
 *   kubelet.awaitRegistration("example.com/fpga", Duration.ofSeconds(5));
 *   kubelet.awaitDevices("example.com/fpga", l -> l.size() == 4, Duration.ofSeconds(5));
 *   Allocation a = kubelet.allocate("example.com/fpga", 1);    // [GetPreferredAllocation,] Allocate
 *   Mark m = kubelet.restart();                                // sockets deleted, served again
 *   kubelet.awaitRegistration("example.com/fpga", m, Duration.ofSeconds(5)); // after the mark
 *   Mark before = kubelet.mark();
 *   Files.delete(pluginSocket);                                // the plugin re-registers in place
 *   kubelet.awaitRegistration("example.com/fpga", before, Duration.ofSeconds(5));
 *   assertThat(kubelet.unhealthyWindows("example.com/fpga", before)).isEmpty(); // no outage
 * }
 * }</pre>
 *
 * <p>Like the kubelet, on start it creates the plugin directory, cleans it up as the {@link
 * KubeletProfile} it models does (up to v1.33 every entry but directories and the checkpoint, in
 * the newest code only sockets), writes no {@code DEPRECATION} file (no kubelet from v1.26 on does)
 * and serves {@code v1beta1.Registration} on {@code kubelet.sock}. {@code Register} is checked for
 * a supported version and an extended resource name, rejected with the kubelet's texts (gRPC {@code
 * UNKNOWN}); before answering, the fake dials the endpoint (joined to the plugin directory, {@link
 * #DIAL_TIMEOUT}, retrying like a blocking dial), calls {@code GetDevicePluginOptions} and opens
 * {@code ListAndWatch} (4 MiB message limit). A second registration of a resource adds a client and
 * makes its endpoint current without closing the old connection; every client's lists (a superseded
 * one's too) replace the resource's device list. When any client's stream ends, the kubelet
 * disconnects a client (which one depends on the profile) and calls {@code PluginDisconnected}, as
 * {@link #dropConnection(String)} describes; {@link #unhealthyWindows(String, Mark)} lists outages.
 *
 * <p>Every event is numbered; {@link #mark()} and the {@code await...(..., Mark, ...)} methods see
 * exactly what happened after a point, however fast. Blocking methods ({@code await...}) throw
 * {@link AssertionError} on timeout with the event log in the message. All methods are thread-safe.
 * For DRA drivers (found in the {@link Builder#registryDir(Path)}), use {@link #dra()}.
 */
public final class FakeKubelet implements AutoCloseable {
  /** The kubelet's socket name in the plugin directory. */
  public static final String KUBELET_SOCKET = "kubelet.sock";

  /** The API version today's kubelets support. */
  public static final String V1BETA1 = "v1beta1";

  /** The kubelet's grace period before a disconnected resource is removed. */
  public static final Duration DEFAULT_GRACE_PERIOD = Duration.ofMinutes(5);

  /** The kubelet's dial timeout for plugin sockets. */
  public static final Duration DIAL_TIMEOUT = Duration.ofSeconds(10);

  /** The kubelet's deadline for {@code GetInfo} in plugin-watcher mode. */
  public static final Duration GET_INFO_TIMEOUT = Duration.ofSeconds(1);

  /** The kubelet's deadline for {@code NotifyRegistrationStatus}. */
  public static final Duration NOTIFY_TIMEOUT = Duration.ofSeconds(5);

  /** The kubelet's deadline for {@code PreStartContainer}. */
  public static final Duration PRE_START_TIMEOUT = Duration.ofSeconds(30);

  /** The device manager's checkpoint file in the plugin directory, kept by every cleanup. */
  public static final String CHECKPOINT_FILE = "kubelet_internal_checkpoint";

  // The parts, each owning one kind of state, wired by KubeletParts; this class delegates.
  private final KubeletParts parts;
  // The transport of the fake's connections and timers (RestartTest looks into it).
  final UdsTransport transport;
  private final DraKubelet dra;

  private FakeKubelet(KubeletParts parts) {
    this.parts = parts;
    this.transport = parts.transport;
    this.dra = new DraKubelet(parts.dra, parts.awaits);
  }

  /** {@return a new builder; {@link Builder#pluginDir(Path)} is required} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * {@return a fake kubelet with defaults: legacy registration only, {@code v1beta1}, 5-min grace}
   *
   * @param pluginDir the device plugin directory (created if missing)
   */
  public static FakeKubelet start(Path pluginDir) {
    return builder().pluginDir(pluginDir).start();
  }

  /** Configures and starts a {@link FakeKubelet}; each setter checks its argument at once. */
  public static final class Builder {
    private final KubeletSettings settings = new KubeletSettings();

    private Builder() {}

    /** Applies a change to the settings, which check its argument. */
    private Builder set(Runnable change) {
      change.run();
      return this;
    }

    /**
     * What deletes this node's ResourceSlices in the API server ({@code @DraTest} sets one), run at
     * {@link #start()} and each {@link FakeKubelet#restart()} as {@link DraKubelet} describes.
     *
     * @param wiper deletes the node's ResourceSlices; null for none (the default)
     * @return this builder
     */
    public Builder draResourceSliceWiper(Runnable wiper) {
      return set(() -> settings.draResourceSliceWiper(wiper));
    }

    /**
     * The deadline of each {@code NodePrepareResources} / {@code NodeUnprepareResources} call
     * (default {@link DraKubelet#CALL_TIMEOUT}, the kubelet's 45 s).
     *
     * @param timeout a positive duration
     * @return this builder
     */
    public Builder draCallTimeout(Duration timeout) {
      return set(() -> settings.draCallTimeout(timeout));
    }

    /**
     * The DRA health service the fake watches on each DRA plugin: {@link
     * DraKubelet#HEALTH_V1ALPHA1_SERVICE} (default; kubelets 1.34 to 1.36 with the {@code
     * ResourceHealthStatus} feature gate on), {@link DraKubelet#HEALTH_V1_SERVICE}, or null (off).
     *
     * @param service the service name, or null
     * @return this builder
     */
    public Builder draHealthService(String service) {
      return set(() -> settings.draHealthService(service));
    }

    /**
     * The kubelet version to model where versions differ (default {@link KubeletProfile#LATEST}).
     *
     * @param profile the profile
     * @return this builder
     */
    public Builder profile(KubeletProfile profile) {
      return set(() -> settings.profile(profile));
    }

    /**
     * Seeds the randomness where the kubelet's order is undefined ({@code available_deviceIDs} in
     * {@code GetPreferredAllocation}, from a Go map), to replay a failure. Unseeded by default.
     *
     * @param seed the seed
     * @return this builder
     */
    public Builder randomSeed(long seed) {
      return set(() -> settings.randomSeed(seed));
    }

    /**
     * For testing waits: {@link FakeKubelet#restart()} pauses this long (default zero) after {@code
     * kubelet.sock} is served again, before it returns, as a loaded machine may. A wait from the
     * {@link Mark} it returns passes with any pause; one from the instant it returned misses a
     * plugin that re-registered meanwhile.
     *
     * @param delay the pause, zero or more
     * @return this builder
     */
    public Builder restartReturnDelay(Duration delay) {
      return set(() -> settings.restartReturnDelay(delay));
    }

    /** Test hook: runs on the restart() caller's thread after kubelet.sock is served again. */
    Builder afterRestartServed(Consumer<FakeKubelet> hook) {
      return set(() -> settings.afterRestartServed(hook));
    }

    /**
     * The device plugin directory (required); {@code kubelet.sock} is served in it. Keep it short:
     * Unix socket paths are limited to 107 bytes.
     *
     * @param dir the directory, created if missing
     * @return this builder
     */
    public Builder pluginDir(Path dir) {
      return set(() -> settings.pluginDir(dir));
    }

    /**
     * Enables plugin-watcher mode: the fake watches this directory (the kubelet's {@code
     * plugins_registry}) for plugin sockets and registers them through {@code
     * pluginregistration.Registration}.
     *
     * @param dir the directory, created if missing
     * @return this builder
     */
    public Builder registryDir(Path dir) {
      return set(() -> settings.registryDir(dir));
    }

    /**
     * Serves {@code v1.PodResourcesLister} on this socket, answering from the fake's allocations.
     *
     * @param socket the socket path (its directory is created if missing)
     * @return this builder
     */
    public Builder podResourcesSocket(Path socket) {
      return set(() -> settings.podResourcesSocket(socket));
    }

    /**
     * The API versions the fake supports (default {@code v1beta1}), the first named in errors.
     *
     * @param versions one or more versions
     * @return this builder
     */
    public Builder supportedVersions(String... versions) {
      return set(() -> settings.supportedVersions(versions));
    }

    /**
     * How long a disconnected resource stays, its devices unhealthy, before it is removed (default
     * {@link #DEFAULT_GRACE_PERIOD}).
     *
     * @param gracePeriod the grace period, zero or more
     * @return this builder
     */
    public Builder gracePeriod(Duration gracePeriod) {
      return set(() -> settings.gracePeriod(gracePeriod));
    }

    /**
     * A deadline for {@code GetDevicePluginOptions}, {@code GetPreferredAllocation} and {@code
     * Allocate} (default 60 s), so a hanging plugin fails a test instead of hanging it. The real
     * kubelet sets none on these calls, as {@link Duration#ZERO} does.
     *
     * @param timeout the deadline, or zero for none
     * @return this builder
     */
    public Builder rpcTimeout(Duration timeout) {
      return set(() -> settings.rpcTimeout(timeout));
    }

    /**
     * Whether a {@code GetPreferredAllocation} answer that breaks the contract (wrong size, IDs
     * outside {@code available_deviceIDs}, a must-include ID missing, not one container response)
     * fails the allocation (default). With {@code false} the fake does as the kubelet: keeps the
     * usable part, fills up from the available devices and only logs the problem as an event.
     *
     * @param strict true to fail such allocations
     * @return this builder
     */
    public Builder strictPreferredAllocation(boolean strict) {
      return set(() -> settings.strictPreferredAllocation(strict));
    }

    /**
     * Adds a listener called for every event, in order, on the thread that caused it: it must be
     * quick and not wait for the fake.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder eventListener(Consumer<KubeletEvent> listener) {
      return set(() -> settings.eventListener(listener));
    }

    /**
     * {@return the started fake kubelet}
     *
     * @throws IllegalStateException when no plugin directory was given
     * @throws IllegalArgumentException when a socket path is too long
     * @throws UncheckedIOException when a directory cannot be created or a socket not served
     */
    public FakeKubelet start() {
      settings.checkStartable();
      FakeKubelet k = new FakeKubelet(new KubeletParts(settings));
      k.parts.lifecycle.start();
      return k;
    }
  }

  // ---- Lifecycle

  /**
   * Does what a kubelet restart does to plugins: stops serving, drops every plugin connection,
   * cleans up the plugin directory (see {@link KubeletProfile}), and serves {@code kubelet.sock}
   * again (and the registry watcher and PodResources, when enabled). As with the kubelet's
   * checkpoint, the resources stay known, with no devices (capacity 0) and a stopped endpoint until
   * their plugins register again, and are removed after the grace period otherwise; allocations
   * survive. Plugin sockets in the registry directory are kept, and rediscovered.
   *
   * @return the position in the event log before the restart began: a wait for what comes after it
   *     (as in the class example) never misses a plugin that re-registers at once
   */
  public Mark restart() {
    Mark before = parts.lifecycle.restart(this::mark);
    parts.afterRestartServed.accept(this);
    return before;
  }

  /**
   * Stops the servers, the watcher, every plugin connection and all threads; deletes {@code
   * kubelet.sock} (and the PodResources socket). Safe to call more than once.
   */
  @Override
  public void close() {
    parts.lifecycle.close();
  }

  /**
   * {@return what the fake failed to release after {@link #close()}, one line per leftover (threads
   * alive, channels not terminated, its own socket files present), empty when all was released or
   * it is not closed yet} Used by the JUnit extension's leak check.
   */
  public List<String> verifyClosed() {
    return parts.lifecycle.leftovers();
  }

  // ---- Accessors

  /**
   * {@return the DRA side of this fake kubelet: DRA driver registrations, prepare and unprepare,
   * device health and DRA pods} One instance per fake kubelet, sharing its event log and marks.
   */
  public DraKubelet dra() {
    return dra;
  }

  /** {@return the device plugin directory, as an absolute path} */
  public Path pluginDir() {
    return parts.pluginDir;
  }

  /** {@return the kubelet's registration socket, {@code pluginDir/kubelet.sock}, absolute} */
  public Path kubeletSocket() {
    return parts.kubeletSocket;
  }

  /** {@return the watched plugins registry directory when plugin-watcher mode is on, else empty} */
  public Optional<Path> registryDir() {
    return parts.registryDir;
  }

  /** {@return the PodResources socket path when it is served, else empty} */
  public Optional<Path> podResourcesSocket() {
    return parts.podResourcesSocket;
  }

  /** {@return the API versions this fake kubelet supports} */
  public List<String> supportedVersions() {
    return parts.supportedVersions;
  }

  /**
   * {@return the current device list of a resource as last sent (after a disconnect: all {@code
   * Unhealthy}), empty when the resource is unknown}
   *
   * @param resource the resource name
   */
  public List<DeviceState> devices(String resource) {
    return parts.model.devices(resource);
  }

  /**
   * {@return the resource's capacity as the kubelet reports it: its number of devices, healthy or
   * not} Healthy and unhealthy IDs are two sets in the kubelet: a repeated ID counts once per set.
   *
   * @param resource the resource name
   */
  public int capacity(String resource) {
    return ResourceState.capacityOf(devices(resource));
  }

  /**
   * {@return the kubelet's allocatable count of the resource: distinct healthy IDs, allocated too}
   *
   * @param resource the resource name
   */
  public int allocatable(String resource) {
    return ResourceState.allocatableOf(devices(resource));
  }

  /** {@return the known resources (also those in their grace period), by first registration} */
  public List<String> resources() {
    return parts.model.resources();
  }

  /**
   * {@return the resources with at least one open {@code ListAndWatch} stream: from the current
   * plugin or from a superseded one whose connection the kubelet still holds}
   */
  public List<String> connectedResources() {
    return parts.model.connectedResources();
  }

  /** {@return every successful registration, in order} */
  public List<Registration> registrations() {
    return parts.model.registrations();
  }

  /**
   * {@return the registration of the plugin currently connected for a resource, empty when none is}
   *
   * @param resource the resource name
   */
  public Optional<Registration> registration(String resource) {
    return parts.model.liveEndpoint(resource).map(ep -> ep.registration);
  }

  /**
   * {@return the channel this kubelet's own calls to the resource's current plugin use, empty when
   * none is connected} For load generators and benchmarks that call the plugin directly, without
   * {@link #allocate(PodRequest)}'s bookkeeping. Do not shut it down: it closes with the plugin's
   * connection, at {@link #restart()} and {@link #close()}.
   *
   * @param resource the resource name
   */
  public Optional<ManagedChannel> pluginChannel(String resource) {
    return parts.model.liveEndpoint(resource).map(PluginConnector::channel);
  }

  /**
   * {@return every {@code Register} call received on {@code kubelet.sock}, accepted or rejected,
   * with the request's fields, in order}
   */
  public List<RegisterAttempt> registerAttempts() {
    return parts.legacyRegistration.attempts();
  }

  /**
   * {@return the serialized size in bytes of the largest {@code ListAndWatch} message received for
   * a resource, 0 when none was received}
   *
   * @param resource the resource name
   */
  public long largestDeviceListBytes(String resource) {
    return parts.model.largestListBytes(resource);
  }

  /** {@return the current allocations (one per pod, container and resource), in order} */
  public List<Allocation> allocations() {
    return parts.allocationFlow.allocations();
  }

  /** {@return the event log so far, in order} */
  public List<KubeletEvent> events() {
    return parts.journal.events();
  }

  /**
   * {@return the events recorded after a mark, in order}
   *
   * @param since a mark from {@link #mark()} or {@link #restart()}
   */
  public List<KubeletEvent> events(Mark since) {
    return parts.journal.events(since);
  }

  /**
   * {@return the current position in the event log} Everything recorded later is "after" the mark,
   * however soon; pass it to the {@code await...} methods that take a mark.
   */
  public Mark mark() {
    return parts.journal.mark();
  }

  /**
   * {@return the stretches that began after a mark in which the resource could not take new pods,
   * in order (the last may still be open)} Such a stretch has allocatable 0 or the current endpoint
   * stopped (so {@code Allocate} fails), after the resource had been available. A plugin that
   * re-registers correctly while the kubelet runs shows none (as the class example checks).
   *
   * @param resource the resource name
   * @param since a mark from {@link #mark()} or {@link #restart()}
   */
  public List<UnhealthyWindow> unhealthyWindows(String resource, Mark since) {
    return parts.journal.unhealthyWindows(resource, since);
  }

  /** {@return the event log as text, one event per line, for failure messages} */
  public String eventLog() {
    return parts.journal.eventLog();
  }

  // ---- Awaiting

  /**
   * {@return the first registration of the resource, also one accepted before the call} Like {@link
   * #awaitRegistration(String, Mark, Duration)}, but from the start of the log.
   *
   * @param resource the resource name
   * @param timeout how long to wait
   */
  public Registration awaitRegistration(String resource, Duration timeout) {
    return parts.awaits.registration(resource, null, timeout);
  }

  /**
   * {@return the first registration of the resource accepted after a mark} Race-free, however soon
   * after the mark the plugin registered (as after {@link #restart()} in the class example).
   *
   * @param resource the resource name
   * @param after a mark from {@link #mark()} or {@link #restart()}
   * @param timeout how long to wait
   */
  public Registration awaitRegistration(String resource, Mark after, Duration timeout) {
    return parts.awaits.registration(resource, after, timeout);
  }

  /**
   * {@return the first registration of the resource at or after an instant}
   *
   * @param resource the resource name
   * @param after the earliest acceptable registration time
   * @param timeout how long to wait
   * @deprecated races with a plugin that registers before the caller took the instant (as after
   *     {@link #restart()}); use {@link #awaitRegistration(String, Mark, Duration)} with a {@link
   *     #mark()} taken before the action
   */
  @Deprecated(forRemoval = true)
  public Registration awaitRegistrationAfter(String resource, Instant after, Duration timeout) {
    return parts.awaits.registrationAfter(resource, after, timeout);
  }

  /**
   * {@return the resource's first list, current or future, that satisfies a condition} On timeout
   * the error shows the last list.
   *
   * @param resource the resource name
   * @param condition tested on each new list (called under the fake's lock: keep it quick)
   * @param timeout how long to wait
   */
  public List<DeviceState> awaitDevices(
      String resource, Predicate<List<DeviceState>> condition, Duration timeout) {
    return parts.awaits.devices(resource, condition, timeout);
  }

  /**
   * {@return the first matching event, also one recorded before the call} Like {@link
   * #awaitEvent(Mark, Predicate, Duration)}, but from the start of the log.
   *
   * @param condition the event to wait for
   * @param timeout how long to wait
   */
  public KubeletEvent awaitEvent(Predicate<KubeletEvent> condition, Duration timeout) {
    return parts.journal.awaitEvent(null, condition, timeout);
  }

  /**
   * {@return the first matching event newer than a mark} Race-free, however soon after the mark it
   * was recorded.
   *
   * @param after a mark from {@link #mark()} or {@link #restart()}
   * @param condition the event to wait for
   * @param timeout how long to wait
   */
  public KubeletEvent awaitEvent(Mark after, Predicate<KubeletEvent> condition, Duration timeout) {
    return parts.journal.awaitEvent(after, condition, timeout);
  }

  /**
   * {@return the resources still connected at the end, empty on success} Waits until every {@code
   * ListAndWatch} stream has ended (e.g. after a test closed its plugins); does not throw.
   *
   * @param timeout how long to wait
   */
  public List<String> awaitAllDisconnected(Duration timeout) {
    return parts.awaits.allDisconnected(timeout);
  }

  // ---- Driving the connection

  /**
   * Cancels the resource's {@code ListAndWatch} stream and opens one on the same connection, as a
   * kubelet may; a plugin must keep serving.
   *
   * @param resource the resource name
   * @throws IllegalStateException when no plugin is connected for it
   */
  public void cancelListAndWatch(String resource) {
    parts.model.cancelStream(resource);
  }

  /**
   * Drops the connection to the resource's current plugin abruptly, as when it breaks on a node:
   * the kubelet sees the stream end, disconnects the client and calls {@code PluginDisconnected}:
   * every device of the resource turns unhealthy at once, the current endpoint is stopped ({@code
   * Allocate} fails: "endpoint ... has been stopped") until the next registration; the resource is
   * removed after the grace period.
   *
   * @param resource the resource name
   * @throws IllegalStateException when no plugin is connected for it
   */
  public void dropConnection(String resource) {
    parts.model.dropConnection(resource);
  }

  // ---- Allocation

  /**
   * {@return the allocation of {@code count} devices to a fresh pod's container, as by {@link
   * #allocate(PodRequest)}}
   *
   * @param resource the resource name
   * @param count how many devices (the kubelet chooses them)
   */
  public Allocation allocate(String resource, int count) {
    return allocate(PodRequest.count(resource, count));
  }

  /**
   * {@return the allocation of exactly these devices to a fresh pod's container, as by {@link
   * #allocate(PodRequest)}} The IDs go to {@code Allocate} as given (no {@code
   * GetPreferredAllocation}), even unknown ones, to test a plugin's validation.
   *
   * @param resource the resource name
   * @param deviceIds the device IDs
   */
  public Allocation allocate(String resource, String... deviceIds) {
    return allocate(PodRequest.devices(resource, deviceIds));
  }

  /**
   * Allocates for one container the way the kubelet's device manager does: chooses from healthy,
   * unallocated devices (asking {@code GetPreferredAllocation} first when the plugin offers it, and
   * checking the answer), calls {@code Allocate} with exactly one container request, requires
   * exactly one container response, records the allocation, then calls {@code PreStartContainer}
   * (30 s deadline) when the plugin requires it (a failure there leaves the devices with the pod,
   * as on a node, until {@link #release(String)}). A container that already holds devices of the
   * resource gets them again without RPCs, as in the kubelet. A request for a resource the kubelet
   * has no device list for (never registered, no list yet, its list refused over 4 MiB, removed
   * after the grace period) is admitted with no devices and no plugin call, as the kubelet's {@code
   * allocateContainerResources} does; the returned allocation has no device IDs and nothing is
   * kept. Failures carry the kubelet's text in {@link AllocationException#getMessage()}.
   *
   * @param request the pod, container and devices
   * @return the allocation
   * @throws AllocationException when the kubelet refuses, an RPC fails or an answer is invalid
   */
  public Allocation allocate(PodRequest request) {
    return parts.allocationFlow.allocate(request);
  }

  /**
   * Restarts a container that holds devices, as the kubelet does after a crash, a kubelet restart
   * or a plugin restart: for each resource the container holds, {@code PreStartContainer} is called
   * again (when the current plugin's options require it) with the same device IDs, whatever their
   * health now; the kubelet never checks health there. No {@code Allocate}.
   *
   * @param podUid the pod's UID ({@link Allocation#podUid()})
   * @param containerName the container
   * @throws IllegalArgumentException when the fake holds no allocation for that container
   * @throws AllocationException when {@code PreStartContainer} fails or the resource's endpoint is
   *     stopped ({@link AllocationException.Reason#ENDPOINT_STOPPED})
   */
  public void restartContainer(String podUid, String containerName) {
    parts.allocationFlow.restartContainer(podUid, containerName);
  }

  /**
   * Releases every allocation of a pod (all its containers), as when the pod is deleted.
   *
   * @param podUid the pod's UID ({@link Allocation#podUid()})
   * @throws IllegalArgumentException when the fake holds no allocation for that pod
   */
  public void release(String podUid) {
    parts.allocationFlow.release(podUid);
  }

  /**
   * Like {@link #release(String)}, for one container of the pod (all its resources), as when its
   * allocation ends.
   *
   * @param podUid the pod's UID
   * @param containerName the container
   * @throws IllegalArgumentException when the fake holds no allocation for that container
   */
  public void release(String podUid, String containerName) {
    parts.allocationFlow.release(podUid, containerName);
  }

  @Override
  public String toString() {
    return "FakeKubelet[" + parts.kubeletSocket + "]";
  }
}
