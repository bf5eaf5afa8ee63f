package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.ManagedChannel;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
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
 * <p>What it does like the kubelet: on start it creates the plugin directory, cleans it up like the
 * {@link KubeletProfile} it models (up to v1.33 every entry but directories and the checkpoint, in
 * the newest code only sockets), writes no {@code DEPRECATION} file (no kubelet from v1.26 on
 * does), and serves {@code v1beta1.Registration} on {@code kubelet.sock}. {@code Register} is
 * checked for a supported version and an extended resource name and rejected with the kubelet's
 * texts (gRPC status {@code UNKNOWN}); then, before answering, the fake dials the endpoint (joined
 * to the plugin directory, 10 s, retrying like a blocking dial), calls {@code
 * GetDevicePluginOptions} and opens {@code ListAndWatch}, received with the kubelet's 4 MiB message
 * limit. A second registration of a resource adds a new client and makes its endpoint the current
 * one; like the kubelet, the fake does not close the old connection, and every client's lists (also
 * a superseded one's) replace the resource's device list. When any client's stream ends, the
 * kubelet disconnects a client (which one depends on the {@link KubeletProfile}) and calls {@code
 * PluginDisconnected}: every device of the resource turns unhealthy at once, the current endpoint
 * is stopped ({@code Allocate} fails with "endpoint ... has been stopped") until the next
 * registration, and the resource is removed after the grace period. The fake keeps a journal of the
 * resource's availability for {@link #unhealthyWindows(String, Mark)}.
 *
 * <p>Every event is numbered; {@link #mark()} and the {@code await...(..., Mark, ...)} methods see
 * exactly what happened after a point, however fast. Blocking methods ({@code await...}) throw
 * {@link AssertionError} on timeout with the event log in the message. All methods are thread-safe.
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

  /**
   * The DRA kubelet plugin service v1 as a driver lists it in {@code supported_versions}:
   * upstream's {@code DRAPluginService} constant of {@code k8s.io/kubelet/pkg/apis/dra/v1}
   * (kubelets 1.34 and newer), not the full gRPC name {@code
   * k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin}, which no kubelet knows.
   */
  public static final String DRA_V1_SERVICE = "v1.DRAPlugin";

  /**
   * The DRA kubelet plugin service v1beta1 as listed in {@code supported_versions} (upstream's
   * {@code DRAPluginService} of {@code k8s.io/kubelet/pkg/apis/dra/v1beta1}; kubelets 1.32 and
   * newer).
   */
  public static final String DRA_V1BETA1_SERVICE = "v1beta1.DRAPlugin";

  /**
   * The alpha DRA service kubelets 1.32 and 1.33 fall back to when a registration lists none they
   * know (upstream's {@code NodeService} of {@code k8s.io/kubelet/pkg/apis/dra/v1alpha4}); the fake
   * calls it as {@code v1alpha3.Node/NodePrepareResources}, which an SDK driver answers {@code
   * Unimplemented}.
   */
  public static final String DRA_V1ALPHA3_FALLBACK_SERVICE = "v1alpha3.Node";

  /** The DRA health service kubelets 1.34 to 1.36 call, and the fake's default. */
  public static final String DRA_HEALTH_V1ALPHA1_SERVICE = "v1alpha1.DRAResourceHealth";

  /** The DRA health service v1 (not called by kubelets up to 1.36). */
  public static final String DRA_HEALTH_V1_SERVICE = "v1.DRAResourceHealth";

  /**
   * The kubelet's deadline for each call to a DRA driver (its {@code defaultClientCallTimeout}).
   */
  public static final Duration DRA_CALL_TIMEOUT = Duration.ofSeconds(45);

  // The parts, each owning one kind of state, built and wired by KubeletParts: this class
  // delegates.
  private final KubeletParts parts;
  // The transport of the fake's connections and timers (RestartTest looks into it).
  final UdsTransport transport;

  private FakeKubelet(KubeletParts parts) {
    this.parts = parts;
    this.transport = parts.transport;
  }

  /**
   * A builder; {@link Builder#pluginDir(Path)} is required.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts a fake kubelet with defaults on a plugin directory: legacy registration only, {@code
   * v1beta1}, the kubelet's 5-minute grace period.
   *
   * @param pluginDir the device plugin directory (created if missing)
   * @return the running fake kubelet
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
     * What deletes this node's ResourceSlices in the API server, called like the kubelet's DRA
     * registration handler does when it starts: at every kubelet start from v1.32 ({@code
     * wipeResourceSlices} with no driver in {@code pkg/kubelet/cm/dra/plugin/registration.go},
     * {@code dra_plugin_manager.go} from v1.34), so here at {@link #start()} and at each {@link
     * FakeKubelet#restart()}, before the plugins registry is watched again. The kubelet runs it in
     * the background, racing with the drivers' registrations; the fake runs it first, so a test
     * sees the slices gone before any driver is back. Each call is recorded as a {@link
     * KubeletEvent.Kind#DRA_SLICES_WIPED} event ({@link KubeletEvent.Outcome#FAILED} with the
     * exception's text when it throws). The DRA test kit ({@code @DraTest}) sets one that deletes
     * the node's slices through its mock API server. Not modelled: the wipe of a driver's slices
     * after its last plugin deregistered (upstream waits {@code wipingDelay}, 30 s by default).
     *
     * @param wiper deletes the node's ResourceSlices; null for none (the default)
     * @return this builder
     */
    public Builder draResourceSliceWiper(Runnable wiper) {
      return set(() -> settings.draResourceSliceWiper(wiper));
    }

    /**
     * The deadline of each {@code NodePrepareResources} / {@code NodeUnprepareResources} call
     * (default {@link #DRA_CALL_TIMEOUT}, the kubelet's 45 s).
     *
     * @param timeout a positive duration
     * @return this builder
     */
    public Builder draCallTimeout(Duration timeout) {
      return set(() -> settings.draCallTimeout(timeout));
    }

    /**
     * Which DRA health service the fake watches on each registered DRA plugin: {@link
     * #DRA_HEALTH_V1ALPHA1_SERVICE} (default, what kubelets 1.34 to 1.36 call with the {@code
     * ResourceHealthStatus} feature gate on), {@link #DRA_HEALTH_V1_SERVICE}, or null to watch none
     * (the feature gate off).
     *
     * @param service the service name, or null
     * @return this builder
     */
    public Builder draHealthService(String service) {
      return set(() -> settings.draHealthService(service));
    }

    /**
     * Which kubelet's behaviour to model where versions differ (default {@link
     * KubeletProfile#LATEST}): what is deleted from the plugin directory on start, and which
     * connection a stream end closes.
     *
     * @param profile the profile
     * @return this builder
     */
    public Builder profile(KubeletProfile profile) {
      return set(() -> settings.profile(profile));
    }

    /**
     * Seeds the randomness the fake uses where the kubelet's order is undefined (the order of
     * {@code available_deviceIDs} in {@code GetPreferredAllocation}, which the kubelet takes from a
     * Go map), to replay a failure. Unseeded by default.
     *
     * @param seed the seed
     * @return this builder
     */
    public Builder randomSeed(long seed) {
      return set(() -> settings.randomSeed(seed));
    }

    /**
     * For testing waits: {@link FakeKubelet#restart()} pauses this long (default zero) after {@code
     * kubelet.sock} is served again, before it returns, as a loaded machine may. A test that waits
     * from the {@link Mark} {@code restart()} returns passes with any pause; one that waits for
     * something "after the instant restart() returned" misses a plugin that re-registered
     * meanwhile.
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
     * The API versions the fake kubelet supports (default {@code v1beta1}); the first is the one it
     * names in errors.
     *
     * @param versions one or more versions
     * @return this builder
     */
    public Builder supportedVersions(String... versions) {
      return set(() -> settings.supportedVersions(versions));
    }

    /**
     * How long a disconnected resource stays (with unhealthy devices) before it is removed; the
     * kubelet's is 5 minutes.
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
     * outside {@code available_deviceIDs}, a must-include ID missing, not exactly one container
     * response) fails the allocation (default). With {@code false} the fake does what the kubelet
     * does: it keeps the usable part of the answer, fills up from the available devices and only
     * records the problem in the event log.
     *
     * @param strict true to fail such allocations
     * @return this builder
     */
    public Builder strictPreferredAllocation(boolean strict) {
      return set(() -> settings.strictPreferredAllocation(strict));
    }

    /**
     * Adds a listener called for every event, in order, on the thread that caused it. It must be
     * quick and must not wait for the fake kubelet.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder eventListener(Consumer<KubeletEvent> listener) {
      return set(() -> settings.eventListener(listener));
    }

    /**
     * Starts the fake kubelet.
     *
     * @return the running fake kubelet
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

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /**
   * Does what a kubelet restart does to plugins: stops serving, drops every plugin connection,
   * cleans up the plugin directory (see {@link KubeletProfile}), and serves {@code kubelet.sock}
   * again (and the registry watcher and PodResources, when enabled). As with the kubelet's
   * checkpoint, the resources stay known, with no devices (capacity 0) and a stopped endpoint until
   * their plugins register again, and are removed after the grace period otherwise; allocations
   * survive. In plugin-watcher mode the plugin's sockets in the registry directory are not deleted:
   * the fake rediscovers them.
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
   * Stops everything: the servers, the watcher, every plugin connection and all threads; deletes
   * {@code kubelet.sock} (and the PodResources socket). Safe to call more than once.
   */
  @Override
  public void close() {
    parts.lifecycle.close();
  }

  /**
   * What the fake failed to release after {@link #close()}: threads still alive, channels not
   * terminated, its own socket files still present. Used by the JUnit extension's leak check.
   *
   * @return one line per leftover; empty when everything was released (or not closed yet)
   */
  public List<String> verifyClosed() {
    return parts.lifecycle.leftovers();
  }

  // ---------------------------------------------------------------------------------------------
  // Accessors

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
   * not} The kubelet keeps healthy and unhealthy device IDs in two sets, so a repeated ID counts
   * once per set.
   *
   * @param resource the resource name
   */
  public int capacity(String resource) {
    return ResourceState.capacityOf(devices(resource));
  }

  /**
   * {@return the resource's allocatable count as the kubelet reports it: its number of distinct
   * healthy device IDs (allocated ones included)}
   *
   * @param resource the resource name
   */
  public int allocatable(String resource) {
    return ResourceState.allocatableOf(devices(resource));
  }

  /**
   * {@return the known resources (connected, or disconnected within their grace period), in order
   * of first registration}
   */
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
   * The connection this kubelet holds to the plugin currently registered for a resource: the
   * channel its own ListAndWatch, GetPreferredAllocation, Allocate and PreStartContainer calls use.
   * For load generators and benchmarks that call the plugin directly, concurrently, without the
   * bookkeeping of {@link #allocate(PodRequest)}. The channel belongs to this kubelet: do not shut
   * it down; it closes when the plugin's connection ends, at {@link #restart()} and at {@link
   * #close()}.
   *
   * @param resource the resource name
   * @return the channel, empty when no plugin is connected for the resource
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
   * The stretches after a mark in which the resource could not take new pods: allocatable 0 or its
   * current endpoint stopped (so {@code Allocate} fails), after it had been available. Only windows
   * that began after the mark are listed. A plugin that re-registers correctly while the kubelet
   * runs shows none (the class example deletes its socket and checks).
   *
   * @param resource the resource name
   * @param since a mark from {@link #mark()} or {@link #restart()}
   * @return the windows in order; the last may still be open
   */
  public List<UnhealthyWindow> unhealthyWindows(String resource, Mark since) {
    return parts.journal.unhealthyWindows(resource, since);
  }

  /** {@return the event log as text, one event per line, for failure messages} */
  public String eventLog() {
    return parts.journal.eventLog();
  }

  // ---------------------------------------------------------------------------------------------
  // Awaiting

  /**
   * Like {@link #awaitRegistration(String, Mark, Duration)}, but any registration of the resource
   * counts: returns the first one, also one accepted before the call.
   *
   * @param resource the resource name
   * @param timeout how long to wait
   * @return the first registration of the resource
   */
  public Registration awaitRegistration(String resource, Duration timeout) {
    return parts.awaits.registration(resource, null, timeout);
  }

  /**
   * Waits for the first registration of the resource accepted after a mark: race-free, however soon
   * after the mark the plugin registered (as after {@link #restart()} in the class example).
   *
   * @param resource the resource name
   * @param after a mark from {@link #mark()} or {@link #restart()}
   * @param timeout how long to wait
   * @return the first registration of the resource newer than the mark
   * @throws AssertionError on timeout, with the event log
   */
  public Registration awaitRegistration(String resource, Mark after, Duration timeout) {
    return parts.awaits.registration(resource, after, timeout);
  }

  /**
   * Waits for a registration of the resource at or after an instant.
   *
   * @param resource the resource name
   * @param after the earliest acceptable registration time
   * @param timeout how long to wait
   * @return the first such registration
   * @throws AssertionError on timeout, with the event log
   * @deprecated races with a plugin that registers before the caller took the instant (as after
   *     {@link #restart()}); use {@link #awaitRegistration(String, Mark, Duration)} with a {@link
   *     #mark()} taken before the action
   */
  @Deprecated(forRemoval = true)
  public Registration awaitRegistrationAfter(String resource, Instant after, Duration timeout) {
    return parts.awaits.registrationAfter(resource, after, timeout);
  }

  /**
   * Waits until the resource's device list satisfies a condition.
   *
   * @param resource the resource name
   * @param condition tested on each new list (called under the fake's lock: keep it quick)
   * @param timeout how long to wait
   * @return the list that satisfied the condition
   * @throws AssertionError on timeout, with the last list and the event log
   */
  public List<DeviceState> awaitDevices(
      String resource, Predicate<List<DeviceState>> condition, Duration timeout) {
    return parts.awaits.devices(resource, condition, timeout);
  }

  /**
   * Like {@link #awaitEvent(Mark, Predicate, Duration)}, but from the start of the log: an event
   * recorded before the call counts.
   *
   * @param condition the event to wait for
   * @param timeout how long to wait
   * @return the first matching event
   */
  public KubeletEvent awaitEvent(Predicate<KubeletEvent> condition, Duration timeout) {
    return parts.journal.awaitEvent(null, condition, timeout);
  }

  /**
   * Waits for the first event after a mark that matches: race-free, however soon after the mark it
   * was recorded.
   *
   * @param after a mark from {@link #mark()} or {@link #restart()}
   * @param condition the event to wait for
   * @param timeout how long to wait
   * @return the first matching event newer than the mark
   * @throws AssertionError on timeout, with the event log
   */
  public KubeletEvent awaitEvent(Mark after, Predicate<KubeletEvent> condition, Duration timeout) {
    return parts.journal.awaitEvent(after, condition, timeout);
  }

  /**
   * Waits until no plugin is connected (every {@code ListAndWatch} stream has ended), e.g. after a
   * test closed its plugins. Does not throw on timeout.
   *
   * @param timeout how long to wait
   * @return the resources still connected at the end; empty on success
   */
  public List<String> awaitAllDisconnected(Duration timeout) {
    return parts.awaits.allDisconnected(timeout);
  }

  // ---------------------------------------------------------------------------------------------
  // DRA

  /**
   * Every DRA driver registration accepted so far, oldest first (also those a restart or a removed
   * registry socket ended).
   *
   * @return the registrations
   */
  public List<DraRegistration> draRegistrations() {
    return parts.dra.registrations();
  }

  /**
   * The registration of the driver's plugin the kubelet would call now: the newest one whose
   * connection is up, else the newest one (like the kubelet's plugin store).
   *
   * @param driver the DRA driver name
   * @return its current registration, or empty when none is registered
   */
  public Optional<DraRegistration> draRegistration(String driver) {
    return parts.dra.registration(driver);
  }

  /**
   * Waits for a registration of the DRA driver (the first one, or any earlier one).
   *
   * @param driver the DRA driver name
   * @param timeout how long to wait
   * @return the first registration of the driver
   * @throws AssertionError on timeout, with the event log
   */
  public DraRegistration awaitDraRegistration(String driver, Duration timeout) {
    return parts.awaits.draRegistration(driver, null, timeout);
  }

  /**
   * Waits for the first registration of the DRA driver accepted after a mark: race-free, however
   * soon after the mark the driver registered.
   *
   * @param driver the DRA driver name
   * @param after a mark from {@link #mark()} or {@link #restart()}
   * @param timeout how long to wait
   * @return the first registration of the driver newer than the mark
   * @throws AssertionError on timeout, with the event log
   */
  public DraRegistration awaitDraRegistration(String driver, Mark after, Duration timeout) {
    return parts.awaits.draRegistration(driver, after, timeout);
  }

  /**
   * Prepares a pod's claims of one driver like the kubelet before the pod starts: claims the fake
   * already holds as prepared (for another pod, or before a restart) only get the pod's reference
   * and are not sent again; the others go to the driver in one {@code NodePrepareResources} call
   * (with the kubelet's 45 s deadline), checked like the kubelet checks it (see {@link DraResult}).
   * On success the claims and their devices are remembered, across {@link #restart()} too, for
   * {@link #unprepareResources}.
   *
   * @param podUid the pod's UID
   * @param driver the DRA driver name
   * @param claims the pod's claims allocated by that driver
   * @return the outcome; {@link DraResult#ok()} is false where the pod would not start
   */
  public DraResult prepareResources(String podUid, String driver, List<DraClaim> claims) {
    return parts.dra.prepare(podUid, driver, List.copyOf(claims));
  }

  /**
   * Unprepares a pod's claims of one driver like the kubelet after the pod stopped: a claim other
   * pods still use only loses this pod's reference; the others go to the driver in one {@code
   * NodeUnprepareResources} call and are forgotten when it succeeds (they stay, for a retry, when
   * it fails).
   *
   * @param podUid the pod's UID
   * @param driver the DRA driver name
   * @return the outcome (no call and no entries when nothing was left to unprepare)
   */
  public DraResult unprepareResources(String podUid, String driver) {
    return parts.dra.unprepare(podUid, driver);
  }

  /**
   * Sends one {@code NodePrepareResources} call with exactly these claims, bypassing the fake's
   * claim cache (to test idempotence or odd requests), and checks the answer like the kubelet.
   *
   * @param driver the DRA driver name
   * @param claims the claims to send
   * @return the outcome
   */
  public DraResult nodePrepareResources(String driver, List<DraClaim> claims) {
    return parts.dra.call(true, driver, List.copyOf(claims), "direct call: ");
  }

  /**
   * Sends one {@code NodeUnprepareResources} call with exactly these claims, bypassing the fake's
   * claim cache (e.g. for a claim the driver never prepared), and checks the answer like the
   * kubelet.
   *
   * @param driver the DRA driver name
   * @param claims the claims to send
   * @return the outcome
   */
  public DraResult nodeUnprepareResources(String driver, List<DraClaim> claims) {
    return parts.dra.call(false, driver, List.copyOf(claims), "direct call: ");
  }

  /**
   * The claims the fake holds as prepared (its claim-info cache, which survives restarts like the
   * kubelet's checkpoint).
   *
   * @return the prepared claims
   */
  public List<DraPreparedClaim> preparedClaims() {
    return parts.dra.preparedClaims();
  }

  /**
   * Starts a pod whose claims are prepared: from now on the PodResources API lists, for each of its
   * containers, the devices of the prepared claims it uses (as dynamic resources), until the claims
   * are unprepared for the pod.
   *
   * @param pod the pod and its containers' claims
   */
  public void draPodStarted(DraPod pod) {
    parts.dra.podStarted(Objects.requireNonNull(pod, "pod"));
  }

  /**
   * The last health the driver reported for each of its devices on {@code NodeWatchResources}
   * (empty before the first message, after a restart until it reports again, and for a driver that
   * does not serve health).
   *
   * @param driver the DRA driver name
   * @return one entry per device, in the order first reported
   */
  public List<DraDeviceHealth> draDeviceHealth(String driver) {
    return parts.dra.deviceHealth(driver);
  }

  /**
   * Waits until the driver's device health satisfies a condition.
   *
   * @param driver the DRA driver name
   * @param condition tested on the health list after each change (under the fake's lock: keep it
   *     quick)
   * @param timeout how long to wait
   * @return the list that satisfied the condition
   * @throws AssertionError on timeout, with the event log
   */
  public List<DraDeviceHealth> awaitDraDeviceHealth(
      String driver, Predicate<List<DraDeviceHealth>> condition, Duration timeout) {
    return parts.awaits.draDeviceHealth(driver, condition, timeout);
  }

  // ---------------------------------------------------------------------------------------------
  // Driving the connection

  /**
   * Cancels the resource's current {@code ListAndWatch} stream and opens a new one on the same
   * connection, as a kubelet may; a plugin must keep serving.
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
   * the devices turn unhealthy at once, the endpoint is stopped and the grace period starts.
   *
   * @param resource the resource name
   * @throws IllegalStateException when no plugin is connected for it
   */
  public void dropConnection(String resource) {
    parts.model.dropConnection(resource);
  }

  // ---------------------------------------------------------------------------------------------
  // Allocation

  /**
   * Allocates {@code count} devices chosen by the kubelet to a fresh pod's container, as {@link
   * #allocate(PodRequest)} does.
   *
   * @param resource the resource name
   * @param count how many devices
   * @return the allocation
   */
  public Allocation allocate(String resource, int count) {
    return allocate(PodRequest.count(resource, count));
  }

  /**
   * Allocates exactly these devices to a fresh pod's container, as {@link #allocate(PodRequest)}
   * does but with the IDs sent to {@code Allocate} as given (no {@code GetPreferredAllocation}),
   * even unknown ones, to test a plugin's validation.
   *
   * @param resource the resource name
   * @param deviceIds the device IDs
   * @return the allocation
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
   * Like {@link #release(String)}, for one container of the pod (all its resources), as when that
   * container's allocation ends.
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
