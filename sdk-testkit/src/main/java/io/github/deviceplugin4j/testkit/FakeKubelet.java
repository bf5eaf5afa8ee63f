package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.v1beta1.Device;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.PodResourcesService;
import io.github.deviceplugin4j.testkit.internal.RegistryWatcher;
import io.github.deviceplugin4j.testkit.internal.ResourceNames;
import io.github.deviceplugin4j.testkit.internal.SocketFiles;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

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
 * <p>What it does like the kubelet: on start it creates the plugin directory, deletes the socket
 * files in it (not directories, not other files), creates the {@code DEPRECATION} file the kubelet
 * writes there, and serves {@code v1beta1.Registration} on {@code kubelet.sock}. {@code Register}
 * is checked for a supported version and an extended resource name and rejected with the kubelet's
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

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());

  private final Path pluginDir;
  private final Path kubeletSocket;
  private final Optional<Path> registryDir;
  private final Optional<Path> podResourcesSocket;
  final List<String> supportedVersions;
  private final Duration gracePeriod;
  final Duration rpcTimeout;
  final boolean strictPreferredAllocation;
  final KubeletProfile profile;
  // Guarded by lock.
  final Random random;
  private final Consumer<FakeKubelet> afterRestartServed;
  private final List<Consumer<KubeletEvent>> listeners;
  final UdsTransport transport = new UdsTransport("fake-kubelet");

  final ReentrantLock lock = new ReentrantLock();
  final Condition changed = lock.newCondition();
  private final ReentrantLock allocationLock = new ReentrantLock();
  private final AllocationFlow allocationFlow = new AllocationFlow(this);
  // Guarded by lock.
  final WatcherRegistrar watchers = new WatcherRegistrar(this);

  // Guarded by lock.
  final Map<String, ResourceState> resources = new LinkedHashMap<>();
  private final List<Registration> registrations = new ArrayList<>();
  private final List<RegisterAttempt> registerAttempts = new ArrayList<>();
  private final List<KubeletEvent> events = new ArrayList<>();
  private long seq;
  final Map<String, PodRecord> pods = new LinkedHashMap<>();
  final List<ManagedChannel> allChannels = new CopyOnWriteArrayList<>();
  private final ReentrantLock lifecycle = new ReentrantLock();
  // Guarded by lifecycle (restart and close).
  private Server kubeletServer;
  private Server podResourcesServer;
  private RegistryWatcher watcher;
  boolean closed;

  private FakeKubelet(Builder b) {
    this.pluginDir = b.pluginDir.toAbsolutePath();
    this.kubeletSocket = pluginDir.resolve(KUBELET_SOCKET);
    this.registryDir = Optional.ofNullable(b.registryDir).map(Path::toAbsolutePath);
    this.podResourcesSocket = Optional.ofNullable(b.podResourcesSocket).map(Path::toAbsolutePath);
    this.supportedVersions = List.copyOf(b.supportedVersions);
    this.gracePeriod = b.gracePeriod;
    this.rpcTimeout = b.rpcTimeout;
    this.strictPreferredAllocation = b.strictPreferredAllocation;
    this.profile = b.profile;
    this.random = b.randomSeed == null ? new Random() : new Random(b.randomSeed);
    Duration delay = b.restartReturnDelay;
    Consumer<FakeKubelet> hook = b.afterRestartServed;
    this.afterRestartServed =
        k -> {
          if (!delay.isZero()) {
            LockSupport.parkNanos(delay.toNanos());
          }
          if (hook != null) {
            hook.accept(k);
          }
        };
    this.listeners = List.copyOf(b.listeners);
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

  /** Configures and starts a {@link FakeKubelet}. */
  public static final class Builder {
    private Path pluginDir;
    private Path registryDir;
    private Path podResourcesSocket;
    private List<String> supportedVersions = List.of(V1BETA1);
    private Duration gracePeriod = DEFAULT_GRACE_PERIOD;
    private Duration rpcTimeout = Duration.ofSeconds(60);
    private boolean strictPreferredAllocation = true;
    private KubeletProfile profile = KubeletProfile.LATEST;
    private Long randomSeed;
    private Duration restartReturnDelay = Duration.ZERO;
    private Consumer<FakeKubelet> afterRestartServed;
    private final List<Consumer<KubeletEvent>> listeners = new ArrayList<>();

    private Builder() {}

    /**
     * Which kubelet's behaviour to model where versions differ (default {@link
     * KubeletProfile#LATEST}): what is deleted from the plugin directory on start, and which
     * connection a stream end closes.
     *
     * @param profile the profile
     * @return this builder
     */
    public Builder profile(KubeletProfile profile) {
      this.profile = Objects.requireNonNull(profile, "profile");
      return this;
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
      this.randomSeed = seed;
      return this;
    }

    /**
     * For testing waits: {@link FakeKubelet#restart()} pauses this long after {@code kubelet.sock}
     * is served again, before it returns, as a loaded machine may. A test that waits race-free
     * (from the {@link Mark} that {@code restart()} returns) passes with any pause; one that waits
     * for something "after the instant restart() returned" misses a plugin that re-registered
     * during the pause. Default zero.
     *
     * @param delay the pause, zero or more
     * @return this builder
     */
    public Builder restartReturnDelay(Duration delay) {
      if (delay.isNegative()) {
        throw new IllegalArgumentException("restartReturnDelay must not be negative: " + delay);
      }
      this.restartReturnDelay = delay;
      return this;
    }

    /** Test hook: runs on the restart() caller's thread after kubelet.sock is served again. */
    Builder afterRestartServed(Consumer<FakeKubelet> hook) {
      this.afterRestartServed = hook;
      return this;
    }

    /**
     * The device plugin directory (required); {@code kubelet.sock} is served in it. Keep it short:
     * Unix socket paths are limited to 107 bytes.
     *
     * @param dir the directory, created if missing
     * @return this builder
     */
    public Builder pluginDir(Path dir) {
      this.pluginDir = Objects.requireNonNull(dir, "pluginDir");
      return this;
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
      this.registryDir = Objects.requireNonNull(dir, "registryDir");
      return this;
    }

    /**
     * Serves {@code v1.PodResourcesLister} on this socket, answering from the fake's allocations.
     *
     * @param socket the socket path (its directory is created if missing)
     * @return this builder
     */
    public Builder podResourcesSocket(Path socket) {
      this.podResourcesSocket = Objects.requireNonNull(socket, "podResourcesSocket");
      return this;
    }

    /**
     * The API versions the fake kubelet supports (default {@code v1beta1}); the first is the one it
     * names in errors.
     *
     * @param versions one or more versions
     * @return this builder
     */
    public Builder supportedVersions(String... versions) {
      if (versions.length == 0) {
        throw new IllegalArgumentException("supportedVersions needs at least one version");
      }
      this.supportedVersions = List.of(versions);
      return this;
    }

    /**
     * How long a disconnected resource stays (with unhealthy devices) before it is removed; the
     * kubelet's is 5 minutes.
     *
     * @param gracePeriod the grace period, zero or more
     * @return this builder
     */
    public Builder gracePeriod(Duration gracePeriod) {
      if (gracePeriod.isNegative()) {
        throw new IllegalArgumentException("gracePeriod must not be negative: " + gracePeriod);
      }
      this.gracePeriod = gracePeriod;
      return this;
    }

    /**
     * A deadline for {@code GetDevicePluginOptions}, {@code GetPreferredAllocation} and {@code
     * Allocate} (default 60 s), so a hanging plugin fails a test instead of hanging it. The real
     * kubelet sets no deadline on these calls; {@link Duration#ZERO} does the same.
     *
     * @param timeout the deadline, or zero for none
     * @return this builder
     */
    public Builder rpcTimeout(Duration timeout) {
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("rpcTimeout must not be negative: " + timeout);
      }
      this.rpcTimeout = timeout;
      return this;
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
      this.strictPreferredAllocation = strict;
      return this;
    }

    /**
     * Adds a listener called for every event, in order, on the thread that caused it. It must be
     * quick and must not wait for the fake kubelet.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder eventListener(Consumer<KubeletEvent> listener) {
      this.listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
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
      if (pluginDir == null) {
        throw new IllegalStateException(
            "pluginDir is required: FakeKubelet.builder().pluginDir(dir).start()");
      }
      UdsTransport.checkSocketPath(pluginDir.resolve(KUBELET_SOCKET));
      if (podResourcesSocket != null) {
        UdsTransport.checkSocketPath(podResourcesSocket);
      }
      FakeKubelet k = new FakeKubelet(this);
      try {
        k.startServing();
      } catch (RuntimeException e) {
        k.close();
        throw e;
      }
      return k;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  private void startServing() {
    try {
      Files.createDirectories(pluginDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the plugin directory " + pluginDir, e);
    }
    List<Path> deleted = cleanUpPluginDir();
    kubeletServer = transport.startServer(kubeletSocket, new RegistrationService());
    record(
        Kind.START,
        "",
        Outcome.INFO,
        "serving "
            + kubeletSocket
            + (deleted.isEmpty() ? "" : "; deleted " + names(deleted))
            + (profile == KubeletProfile.LATEST ? "" : "; profile " + profile)
            + registryDir.map(d -> "; watching " + d).orElse("")
            + podResourcesSocket.map(p -> "; PodResources on " + p).orElse(""));
    podResourcesSocket.ifPresent(this::startPodResources);
    registryDir.ifPresent(this::startWatcher);
  }

  /**
   * The device manager's cleanup on start (sockets only, or with v1.26 every non-directory file but
   * the checkpoint), then the DEPRECATION file its plugin-watcher handler writes.
   */
  private List<Path> cleanUpPluginDir() {
    List<Path> deleted =
        profile.deletesAllFilesOnStart()
            ? SocketFiles.deleteNonDirectoriesIn(pluginDir, CHECKPOINT_FILE)
            : SocketFiles.deleteSocketsIn(pluginDir);
    try {
      Path deprecation = pluginDir.resolve("DEPRECATION");
      if (!Files.exists(deprecation)) {
        Files.createFile(deprecation);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + pluginDir.resolve("DEPRECATION"), e);
    }
    return deleted;
  }

  private void startPodResources(Path socket) {
    try {
      Files.createDirectories(socket.getParent());
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare the PodResources socket " + socket, e);
    }
    podResourcesServer =
        transport.startServer(socket, new PodResourcesService(new PodResourcesView(this)));
  }

  private void startWatcher(Path dir) {
    RegistryWatcher w =
        new RegistryWatcher(
            dir, p -> transport.executor().execute(() -> watchers.register(p)), watchers::removed);
    w.start();
    lock.lock();
    try {
      watcher = w;
    } finally {
      lock.unlock();
    }
  }

  private static String names(List<Path> paths) {
    return paths.stream().map(p -> p.getFileName().toString()).toList().toString();
  }

  /**
   * Does what a kubelet restart does to plugins: stops serving, drops every plugin connection,
   * cleans up the plugin directory (see {@link KubeletProfile}), and serves {@code kubelet.sock}
   * again (and the registry watcher and PodResources, when enabled). As with the kubelet's
   * checkpoint, the resources stay known, with no devices (capacity 0) and a stopped endpoint until
   * their plugins register again, and are removed after the grace period otherwise; allocations
   * survive. In plugin-watcher mode the plugin's sockets in the registry directory are not deleted:
   * the fake rediscovers them.
   *
   * <p>Returns a mark taken before anything happens, so waiting for what comes after it never
   * misses a plugin that re-registers at once:
   *
   * <pre>{@code
   * Mark m = kubelet.restart();
   * Registration again = kubelet.awaitRegistration(resource, m, Duration.ofSeconds(5));
   * }</pre>
   *
   * @return the position in the event log before the restart began
   */
  public Mark restart() {
    Mark before;
    lifecycle.lock();
    try {
      before = mark();
      doRestart();
    } finally {
      lifecycle.unlock();
    }
    afterRestartServed.accept(this);
    return before;
  }

  private void doRestart() {
    lock.lock();
    try {
      checkOpen();
      record(Kind.RESTART, "", Outcome.INFO, "stopping");
    } finally {
      lock.unlock();
    }
    stopServers();
    lock.lock();
    try {
      for (ResourceState rs : resources.values()) {
        // The kubelet process is gone: every connection with it, current or superseded.
        for (Endpoint ep : List.copyOf(rs.open)) {
          killLocked(rs, ep);
        }
        rs.clients.clear();
        if (rs.endpoint != null && !rs.endpoint.stopped) {
          pluginDisconnectedLocked(rs, rs.endpoint, "kubelet restarted");
        }
        // The new kubelet knows the resource from its checkpoint, with no devices (capacity 0)
        // and a stopped endpoint without options, until the plugin registers again.
        rs.devices = List.of();
        rs.endpoint = Endpoint.fromCheckpoint(rs.name, rs.endpoint);
        noteHealthLocked(rs, "kubelet restarted: resource known from its checkpoint only");
      }
      watchers.clear();
    } finally {
      lock.unlock();
    }
    List<Path> deleted = cleanUpPluginDir();
    kubeletServer = transport.startServer(kubeletSocket, new RegistrationService());
    record(
        Kind.RESTART,
        "",
        Outcome.OK,
        "serving "
            + kubeletSocket
            + " again"
            + (deleted.isEmpty() ? "" : "; deleted " + names(deleted)));
    podResourcesSocket.ifPresent(this::startPodResources);
    registryDir.ifPresent(this::startWatcher);
  }

  private void stopServers() {
    RegistryWatcher w;
    lock.lock();
    try {
      w = watcher;
      watcher = null;
    } finally {
      lock.unlock();
    }
    if (w != null) {
      w.close();
    }
    for (Server s : new Server[] {kubeletServer, podResourcesServer}) {
      if (s != null) {
        s.shutdownNow();
        try {
          s.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    kubeletServer = null;
    podResourcesServer = null;
    // A Go listener unlinks its socket on close.
    deleteQuietly(kubeletSocket);
    podResourcesSocket.ifPresent(FakeKubelet::deleteQuietly);
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // best effort
    }
  }

  /**
   * Stops everything: the servers, the watcher, every plugin connection and all threads; deletes
   * {@code kubelet.sock} (and the PodResources socket). Safe to call more than once.
   */
  @Override
  public void close() {
    lifecycle.lock();
    try {
      doClose();
    } finally {
      lifecycle.unlock();
    }
  }

  private void doClose() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
    } finally {
      lock.unlock();
    }
    stopServers();
    lock.lock();
    try {
      for (ResourceState rs : resources.values()) {
        if (rs.removal != null) {
          rs.removal.cancel(false);
        }
        for (Endpoint ep : List.copyOf(rs.open)) {
          killLocked(rs, ep);
        }
        if (rs.endpoint != null) {
          rs.endpoint.stopped = true;
        }
      }
      record(Kind.STOP, "", Outcome.INFO, "closed");
    } finally {
      lock.unlock();
    }
    for (ManagedChannel ch : allChannels) {
      ch.shutdownNow();
    }
    for (ManagedChannel ch : allChannels) {
      try {
        ch.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    transport.close();
  }

  /**
   * What the fake failed to release after {@link #close()}: threads still alive, channels not
   * terminated, its own socket files still present. Used by the JUnit extension's leak check.
   *
   * @return one line per leftover; empty when everything was released (or not closed yet)
   */
  public List<String> verifyClosed() {
    List<String> problems = new ArrayList<>();
    lock.lock();
    try {
      if (!closed) {
        problems.add("the fake kubelet was not closed");
        return problems;
      }
    } finally {
      lock.unlock();
    }
    for (ManagedChannel ch : allChannels) {
      if (!ch.isTerminated()) {
        problems.add("a channel to a plugin is not terminated: " + ch);
      }
    }
    if (!transport.isTerminated()) {
      problems.add("event loop or executors not terminated");
    }
    for (String t : transport.liveThreads()) {
      problems.add("thread still alive: " + t);
    }
    if (Files.exists(kubeletSocket)) {
      problems.add("socket file still present: " + kubeletSocket);
    }
    podResourcesSocket
        .filter(Files::exists)
        .ifPresent(p -> problems.add("socket file still present: " + p));
    return problems;
  }

  void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the fake kubelet is closed");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Accessors

  /**
   * The device plugin directory.
   *
   * @return the absolute path
   */
  public Path pluginDir() {
    return pluginDir;
  }

  /**
   * The kubelet's registration socket, {@code pluginDir/kubelet.sock}.
   *
   * @return the absolute path
   */
  public Path kubeletSocket() {
    return kubeletSocket;
  }

  /**
   * The watched plugins registry directory, when plugin-watcher mode is on.
   *
   * @return the directory or empty
   */
  public Optional<Path> registryDir() {
    return registryDir;
  }

  /**
   * The PodResources socket, when served.
   *
   * @return the socket path or empty
   */
  public Optional<Path> podResourcesSocket() {
    return podResourcesSocket;
  }

  /**
   * The API versions this fake kubelet supports.
   *
   * @return the versions
   */
  public List<String> supportedVersions() {
    return supportedVersions;
  }

  /**
   * The current device list of a resource as last sent (after a disconnect: all {@code Unhealthy}).
   *
   * @param resource the resource name
   * @return the devices, empty when the resource is unknown
   */
  public List<DeviceState> devices(String resource) {
    return locked(
        () -> {
          ResourceState rs = resources.get(resource);
          return rs == null ? List.of() : rs.devices;
        });
  }

  /**
   * The resource's capacity as the kubelet reports it: devices, healthy or not. The kubelet keeps
   * healthy and unhealthy device IDs in two sets, so a repeated ID counts once per set.
   *
   * @param resource the resource name
   * @return the number of devices
   */
  public int capacity(String resource) {
    return capacityOf(devices(resource));
  }

  private static int capacityOf(List<DeviceState> list) {
    Set<String> healthy = new HashSet<>();
    Set<String> unhealthy = new HashSet<>();
    for (DeviceState d : list) {
      (d.healthy() ? healthy : unhealthy).add(d.id());
    }
    return healthy.size() + unhealthy.size();
  }

  /**
   * The resource's allocatable count as the kubelet reports it: distinct healthy device IDs
   * (allocated ones included).
   *
   * @param resource the resource name
   * @return the number of healthy devices
   */
  public int allocatable(String resource) {
    return allocatableOf(devices(resource));
  }

  private static int allocatableOf(List<DeviceState> list) {
    Set<String> healthy = new HashSet<>();
    for (DeviceState d : list) {
      if (d.healthy()) {
        healthy.add(d.id());
      }
    }
    return healthy.size();
  }

  private <T> T locked(Supplier<T> body) {
    lock.lock();
    try {
      return body.get();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The known resources (connected, or disconnected within their grace period).
   *
   * @return resource names in order of first registration
   */
  public List<String> resources() {
    return locked(() -> List.copyOf(resources.keySet()));
  }

  /**
   * Resources with at least one open {@code ListAndWatch} stream: from the current plugin or from a
   * superseded one whose connection the kubelet still holds.
   *
   * @return resource names
   */
  public List<String> connectedResources() {
    lock.lock();
    try {
      List<String> out = new ArrayList<>();
      for (ResourceState rs : resources.values()) {
        for (Endpoint ep : rs.open) {
          if (ep.streamOpen && !ep.connectionClosed && !ep.dead) {
            out.add(rs.name);
            break;
          }
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Every successful registration, in order.
   *
   * @return the registrations
   */
  public List<Registration> registrations() {
    return locked(() -> List.copyOf(registrations));
  }

  /**
   * The registration of the plugin currently connected for a resource.
   *
   * @param resource the resource name
   * @return the registration, empty when no plugin is connected for it
   */
  public Optional<Registration> registration(String resource) {
    return locked(() -> liveEndpoint(resource).map(ep -> ep.registration));
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
    return locked(() -> liveEndpoint(resource).map(ep -> ep.channel));
  }

  /**
   * Every {@code Register} call received on {@code kubelet.sock}, accepted or rejected, with the
   * request's fields.
   *
   * @return the attempts in order
   */
  public List<RegisterAttempt> registerAttempts() {
    return locked(() -> List.copyOf(registerAttempts));
  }

  /**
   * The serialized size of the largest {@code ListAndWatch} message received for a resource.
   *
   * @param resource the resource name
   * @return bytes, 0 when none was received
   */
  public long largestDeviceListBytes(String resource) {
    return locked(
        () -> {
          ResourceState rs = resources.get(resource);
          return rs == null ? 0 : rs.largestListBytes;
        });
  }

  /**
   * The current allocations (one per pod, container and resource), in order.
   *
   * @return the allocations
   */
  public List<Allocation> allocations() {
    lock.lock();
    try {
      List<Allocation> out = new ArrayList<>();
      for (PodRecord p : pods.values()) {
        out.addAll(p.allocations.values());
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The event log so far.
   *
   * @return the events in order
   */
  public List<KubeletEvent> events() {
    return locked(() -> List.copyOf(events));
  }

  /**
   * The events recorded after a mark.
   *
   * @param since a mark from {@link #mark()} or {@link #restart()}
   * @return the events newer than the mark, in order
   */
  public List<KubeletEvent> events(Mark since) {
    return locked(() -> List.copyOf(eventsAfterLocked(since)));
  }

  private List<KubeletEvent> eventsAfterLocked(Mark since) {
    // seq n is at index n - 1.
    int from = (int) Math.min(since.seq(), events.size());
    return events.subList(from, events.size());
  }

  /**
   * The current position in the event log. Everything recorded later is "after" the mark, however
   * soon; pass it to the {@code await...} methods that take a mark.
   *
   * @return the mark
   */
  public Mark mark() {
    return locked(() -> new Mark(seq, System.nanoTime(), Instant.now()));
  }

  /**
   * The stretches after a mark in which the resource could not take new pods: allocatable 0 or its
   * current endpoint stopped (so {@code Allocate} fails), after it had been available. Only windows
   * that began after the mark are listed. A plugin that re-registers correctly while the kubelet
   * runs shows none:
   *
   * <pre>{@code
   * Mark m = kubelet.mark();
   * Files.delete(pluginSocket);                      // the plugin serves again and re-registers
   * kubelet.awaitRegistration(resource, m, timeout);
   * assertThat(kubelet.unhealthyWindows(resource, m)).isEmpty();
   * }</pre>
   *
   * @param resource the resource name
   * @param since a mark from {@link #mark()} or {@link #restart()}
   * @return the windows in order; the last may still be open
   */
  public List<UnhealthyWindow> unhealthyWindows(String resource, Mark since) {
    lock.lock();
    try {
      ResourceState rs = resources.get(resource);
      List<UnhealthyWindow> out = new ArrayList<>();
      if (rs == null) {
        return out;
      }
      boolean available = false;
      HealthPoint start = null;
      for (HealthPoint p : rs.journal) {
        if (available && !p.available()) {
          start = p;
        } else if (!available && p.available() && start != null) {
          if (start.seq() > since.seq()) {
            out.add(
                new UnhealthyWindow(
                    resource,
                    start.seq(),
                    start.nanos(),
                    OptionalLong.of(p.seq()),
                    OptionalLong.of(p.nanos()),
                    start.cause()));
          }
          start = null;
        }
        available = p.available();
      }
      if (start != null && start.seq() > since.seq()) {
        out.add(
            new UnhealthyWindow(
                resource,
                start.seq(),
                start.nanos(),
                OptionalLong.empty(),
                OptionalLong.empty(),
                start.cause()));
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The event log as text, one event per line, for failure messages.
   *
   * @return the log
   */
  public String eventLog() {
    return locked(() -> eventLogLocked());
  }

  private String eventLogLocked() {
    StringBuilder b = new StringBuilder("fake kubelet event log (").append(pluginDir).append("):");
    for (KubeletEvent e : events) {
      b.append("\n  #")
          .append(e.seq())
          .append(' ')
          .append(TIME.format(e.time()))
          .append(' ')
          .append(e.kind())
          .append(e.resource().isEmpty() ? "" : " " + e.resource())
          .append(' ')
          .append(e.outcome())
          .append(e.detail().isEmpty() ? "" : ": " + e.detail());
    }
    return b.toString();
  }

  // ---------------------------------------------------------------------------------------------
  // Awaiting

  /**
   * Waits for a registration of the resource (the first one, or any earlier one).
   *
   * @param resource the resource name
   * @param timeout how long to wait
   * @return the first registration of the resource
   * @throws AssertionError on timeout, with the event log
   */
  public Registration awaitRegistration(String resource, Duration timeout) {
    return await(
        "a registration of " + resource,
        timeout,
        () ->
            registrations.stream()
                .filter(r -> r.resourceName().equals(resource))
                .findFirst()
                .orElse(null));
  }

  /**
   * Waits for the first registration of the resource accepted after a mark: race-free, however soon
   * after the mark the plugin registered.
   *
   * <pre>{@code
   * Mark m = kubelet.restart();
   * Registration again = kubelet.awaitRegistration(resource, m, Duration.ofSeconds(5));
   * }</pre>
   *
   * @param resource the resource name
   * @param after a mark from {@link #mark()} or {@link #restart()}
   * @param timeout how long to wait
   * @return the first registration of the resource newer than the mark
   * @throws AssertionError on timeout, with the event log
   */
  public Registration awaitRegistration(String resource, Mark after, Duration timeout) {
    return await(
        "a registration of " + resource + " after event #" + after.seq(),
        timeout,
        () ->
            registrations.stream()
                .filter(r -> r.resourceName().equals(resource) && r.isAfter(after))
                .findFirst()
                .orElse(null));
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
    return await(
        "a registration of " + resource + " at or after " + after,
        timeout,
        () ->
            registrations.stream()
                .filter(r -> r.resourceName().equals(resource) && !r.at().isBefore(after))
                .findFirst()
                .orElse(null));
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
    return await(
        "a device list of " + resource + " matching the condition",
        timeout,
        () -> {
          ResourceState rs = resources.get(resource);
          List<DeviceState> list = rs == null ? List.of() : rs.devices;
          return condition.test(list) ? list : null;
        });
  }

  /**
   * Waits for an event (already recorded or future) that matches.
   *
   * @param condition the event to wait for
   * @param timeout how long to wait
   * @return the first matching event
   * @throws AssertionError on timeout, with the event log
   */
  public KubeletEvent awaitEvent(Predicate<KubeletEvent> condition, Duration timeout) {
    return await(
        "an event matching the condition",
        timeout,
        () -> events.stream().filter(condition).findFirst().orElse(null));
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
    return await(
        "an event after #" + after.seq() + " matching the condition",
        timeout,
        () -> eventsAfterLocked(after).stream().filter(condition).findFirst().orElse(null));
  }

  /**
   * Waits until no plugin is connected (every {@code ListAndWatch} stream has ended), e.g. after a
   * test closed its plugins. Does not throw on timeout.
   *
   * @param timeout how long to wait
   * @return the resources still connected at the end; empty on success
   */
  public List<String> awaitAllDisconnected(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (true) {
        List<String> connected = connectedResources();
        long left = deadline - System.nanoTime();
        if (connected.isEmpty() || left <= 0) {
          return connected;
        }
        changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return connectedResources();
    } finally {
      lock.unlock();
    }
  }

  private <T> T await(String what, Duration timeout, Supplier<T> probe) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (true) {
        T value = probe.get();
        if (value != null) {
          return value;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(
              "timed out after "
                  + timeout.toMillis()
                  + " ms waiting for "
                  + what
                  + "\n"
                  + eventLogLocked());
        }
        changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for " + what, e);
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Events

  KubeletEvent record(Kind kind, String resource, Outcome outcome, String detail) {
    return record(kind, resource, outcome, detail, Facts.NONE);
  }

  KubeletEvent record(Kind kind, String resource, Outcome outcome, String detail, Facts f) {
    lock.lock();
    try {
      KubeletEvent e =
          new KubeletEvent(
              ++seq,
              System.nanoTime(),
              Instant.now(),
              kind,
              resource,
              outcome,
              detail,
              f.devices,
              f.healthy,
              f.bytes,
              f.endpoint,
              f.version,
              f.allocatable);
      events.add(e);
      changed.signalAll();
      for (Consumer<KubeletEvent> l : listeners) {
        try {
          l.accept(e);
        } catch (RuntimeException ex) {
          // a listener must not break the kubelet
        }
      }
      return e;
    } finally {
      lock.unlock();
    }
  }

  void recordUnlocked(Kind kind, String resource, Outcome outcome, String detail) {
    record(kind, resource, outcome, detail, Facts.NONE);
  }

  // ---------------------------------------------------------------------------------------------
  // Registration (legacy)

  private final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
    @Override
    public void register(RegisterRequest r, StreamObserver<Empty> response) {
      Optional<String> error = handleRegister(r);
      if (error.isPresent()) {
        response.onError(Status.UNKNOWN.withDescription(error.get()).asRuntimeException());
      } else {
        response.onNext(Empty.getDefaultInstance());
        response.onCompleted();
      }
    }
  }

  private Optional<String> handleRegister(RegisterRequest r) {
    Instant at = Instant.now();
    String resource = r.getResourceName();
    String error = null;
    if (!supportedVersions.contains(r.getVersion())) {
      error = ResourceNames.unsupportedVersionError(r.getVersion(), supportedVersions);
    } else if (!ResourceNames.isExtendedResourceName(resource)) {
      error = ResourceNames.invalidNameError(resource);
    } else {
      Path endpoint = joinLikeGo(pluginDir, r.getEndpoint());
      try {
        connect(resource, endpoint, Registration.Mode.LEGACY, r.getVersion(), null);
      } catch (ConnectException e) {
        error = e.getMessage();
      }
    }
    lock.lock();
    try {
      registerAttempts.add(
          new RegisterAttempt(
              at,
              r.getVersion(),
              r.getEndpoint(),
              resource,
              r.hasOptions(),
              r.getOptions().getPreStartRequired(),
              r.getOptions().getGetPreferredAllocationAvailable(),
              Optional.ofNullable(error)));
      record(
          Kind.REGISTER,
          resource,
          error == null ? Outcome.OK : Outcome.FAILED,
          error == null
              ? "endpoint=" + r.getEndpoint() + " version=" + r.getVersion()
              : error + " (version=" + r.getVersion() + " endpoint=" + r.getEndpoint() + ")",
          error == null
              ? Facts.of().endpoint(joinLikeGo(pluginDir, r.getEndpoint())).version(r.getVersion())
              : Facts.NONE);
    } finally {
      lock.unlock();
    }
    return Optional.ofNullable(error);
  }

  /** Go's filepath.Join: an absolute second part is not absolute any more; the result is clean. */
  private static Path joinLikeGo(Path dir, String name) {
    String stripped = name.replaceFirst("^/+", "");
    return (stripped.isEmpty() ? dir : dir.resolve(stripped)).normalize();
  }

  static final class ConnectException extends Exception {
    private static final long serialVersionUID = 1L;

    ConnectException(String message) {
      super(message);
    }
  }

  /**
   * Dials the plugin, asks for its options, installs it as the resource's endpoint (closing a
   * previous one) and opens ListAndWatch.
   */
  Registration connect(
      String resource, Path socket, Registration.Mode mode, String version, Path registrySocket)
      throws ConnectException {
    ManagedChannel channel = transport.channel(socket);
    track(channel);
    boolean ready;
    try {
      ready =
          UdsTransport.dial(
              channel,
              DIAL_TIMEOUT,
              () ->
                  recordUnlocked(
                      Kind.ENDPOINT_NOT_READY,
                      resource,
                      Outcome.FAILED,
                      "the first connection to "
                          + socket
                          + " failed: a plugin must serve before it registers (the kubelet keeps"
                          + " dialling for up to 10 s)"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ready = false;
    }
    if (!ready) {
      channel.shutdownNow();
      throw new ConnectException(
          "failed to dial device plugin: context deadline exceeded (nothing served gRPC on "
              + socket
              + " within "
              + DIAL_TIMEOUT.toSeconds()
              + " s)");
    }
    DevicePluginOptions options;
    try {
      options =
          withTimeout(DevicePluginGrpc.newBlockingStub(channel))
              .getDevicePluginOptions(Empty.getDefaultInstance());
    } catch (StatusRuntimeException e) {
      channel.shutdownNow();
      String msg = "failed to get device plugin options: " + describe(e.getStatus());
      recordUnlocked(Kind.GET_DEVICE_PLUGIN_OPTIONS, resource, Outcome.FAILED, msg);
      throw new ConnectException(msg);
    }
    Endpoint ep;
    lock.lock();
    try {
      if (closed) {
        channel.shutdownNow();
        throw new ConnectException("the kubelet is shutting down");
      }
      KubeletEvent accepted =
          record(
              Kind.GET_DEVICE_PLUGIN_OPTIONS,
              resource,
              Outcome.OK,
              "pre_start_required="
                  + options.getPreStartRequired()
                  + " get_preferred_allocation_available="
                  + options.getGetPreferredAllocationAvailable(),
              Facts.of().endpoint(socket));
      Registration reg =
          new Registration(
              resource,
              socket.toString(),
              version,
              options.getPreStartRequired(),
              options.getGetPreferredAllocationAvailable(),
              mode,
              accepted.time(),
              accepted.seq(),
              accepted.nanos());
      ep = new Endpoint(resource, socket, channel, options, reg, registrySocket);
      ResourceState rs = resources.computeIfAbsent(resource, ResourceState::new);
      Endpoint old = rs.endpoint;
      // The kubelet's registerClient: a new client for the name; the old connection stays open.
      if (!profile.disconnectsTheEndedClient()) {
        rs.clients.clear();
      }
      rs.clients.add(ep);
      rs.open.removeIf(e -> e.dead || (e.connectionClosed && !e.streamOpen));
      rs.open.add(ep);
      // PluginConnected: the new endpoint is the resource's current one.
      rs.endpoint = ep;
      if (rs.removal != null) {
        rs.removal.cancel(false);
        rs.removal = null;
      }
      if (old != null && old.channel != null && !old.connectionClosed && !old.dead) {
        record(
            Kind.REGISTER,
            resource,
            Outcome.INFO,
            "a new client for "
                + resource
                + " supersedes the one on "
                + old.socket
                + "; like the kubelet, the old connection stays open and its lists still count",
            Facts.of().endpoint(old.socket));
      }
      registrations.add(reg);
      startListAndWatchLocked(ep);
      noteHealthLocked(rs, "registered " + socket);
    } finally {
      lock.unlock();
    }
    return ep.registration;
  }

  /**
   * Keeps a channel to a plugin for {@link #close()} and {@link #verifyClosed()}; channels that
   * have terminated are dropped, so a fake that sees thousands of registrations stays flat.
   */
  void track(ManagedChannel channel) {
    allChannels.removeIf(ManagedChannel::isTerminated);
    allChannels.add(channel);
  }

  <S extends io.grpc.stub.AbstractStub<S>> S withTimeout(S stub) {
    return rpcTimeout.isZero()
        ? stub
        : stub.withDeadlineAfter(rpcTimeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  static String describe(Status s) {
    return s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription());
  }

  // ---------------------------------------------------------------------------------------------
  // ListAndWatch and the kubelet's client/endpoint bookkeeping

  private void startListAndWatchLocked(Endpoint ep) {
    int gen = ++ep.generation;
    ep.streamOpen = true;
    // Not in the context of the Register call that may have started it: that one ends soon.
    Context.ROOT.run(() -> openListAndWatch(ep, gen));
  }

  private void openListAndWatch(Endpoint ep, int gen) {
    DevicePluginGrpc.newStub(ep.channel)
        .listAndWatch(
            Empty.getDefaultInstance(),
            new ClientResponseObserver<Empty, ListAndWatchResponse>() {
              @Override
              public void beforeStart(ClientCallStreamObserver<Empty> requestStream) {
                ep.call = requestStream;
              }

              @Override
              public void onNext(ListAndWatchResponse value) {
                onDeviceList(ep, gen, value);
              }

              @Override
              public void onError(Throwable t) {
                onStreamEnded(ep, gen, Status.fromThrowable(t));
              }

              @Override
              public void onCompleted() {
                onStreamEnded(ep, gen, null);
              }
            });
  }

  /**
   * The kubelet's genericDeviceUpdateCallback: keyed by resource name only, so a list from any
   * client, also a superseded one, replaces the resource's devices (and may make them healthy again
   * while the endpoint stays stopped).
   */
  private void onDeviceList(Endpoint ep, int gen, ListAndWatchResponse resp) {
    lock.lock();
    try {
      ResourceState rs = resources.get(ep.resource);
      if (ep.generation != gen || ep.dead || rs == null) {
        return;
      }
      List<DeviceState> list = new ArrayList<>(resp.getDevicesCount());
      int healthy = 0;
      for (Device d : resp.getDevicesList()) {
        List<Long> numa = new ArrayList<>();
        if (d.hasTopology()) {
          d.getTopology().getNodesList().forEach(n -> numa.add(n.getID()));
        }
        DeviceState s = new DeviceState(d.getID(), d.getHealth(), numa);
        if (s.healthy()) {
          healthy++;
        }
        list.add(s);
      }
      int size = resp.getSerializedSize();
      rs.devices = Collections.unmodifiableList(list);
      rs.largestListBytes = Math.max(rs.largestListBytes, size);
      boolean current = rs.endpoint == ep;
      record(
          Kind.LIST_AND_WATCH,
          ep.resource,
          Outcome.OK,
          list.size()
              + " devices, "
              + healthy
              + " healthy ("
              + size
              + " bytes)"
              + (current ? "" : " from the superseded client on " + ep.socket),
          Facts.of().devices(list.size()).healthy(healthy).bytes(size).endpoint(ep.socket));
      noteHealthLocked(rs, "device list from " + ep.socket);
    } finally {
      lock.unlock();
    }
  }

  private void onStreamEnded(Endpoint ep, int gen, Status status) {
    lock.lock();
    try {
      if (ep.generation != gen || ep.dead) {
        return;
      }
      ep.streamOpen = false;
      String reason;
      if (ep.connectionClosed) {
        reason = "the stream ended: the kubelet had closed the connection to " + ep.socket;
        record(
            Kind.LIST_AND_WATCH, ep.resource, Outcome.INFO, reason, Facts.of().endpoint(ep.socket));
      } else if (status == null) {
        reason = "the plugin ended the ListAndWatch stream on " + ep.socket;
        record(
            Kind.LIST_AND_WATCH,
            ep.resource,
            Outcome.FAILED,
            reason,
            Facts.of().endpoint(ep.socket));
      } else if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
        reason = "device list over the kubelet's 4 MiB limit";
        record(
            Kind.LIST_AND_WATCH,
            ep.resource,
            Outcome.FAILED,
            "a device list exceeds the kubelet's 4 MiB message limit ("
                + describe(status)
                + "); on a node the resource breaks the same way (kubernetes#109304)",
            Facts.of().endpoint(ep.socket));
      } else {
        reason = "ListAndWatch on " + ep.socket + " failed: " + describe(status);
        record(
            Kind.LIST_AND_WATCH,
            ep.resource,
            Outcome.FAILED,
            reason,
            Facts.of().endpoint(ep.socket));
      }
      clientRunEndedLocked(ep, reason);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The kubelet's runClient after a client's ListAndWatch returned: looks a client up and
   * disconnects it. Up to v1.36 the lookup is by resource name (the newest client, whichever stream
   * ended); from v1.37 by resource name and socket path.
   */
  private void clientRunEndedLocked(Endpoint ended, String reason) {
    ResourceState rs = resources.get(ended.resource);
    if (rs == null) {
      return;
    }
    Endpoint c = null;
    if (profile.disconnectsTheEndedClient()) {
      for (Endpoint x : rs.clients) {
        if (x.socket.equals(ended.socket)) {
          c = x;
          break;
        }
      }
    } else if (!rs.clients.isEmpty()) {
      c = rs.clients.get(rs.clients.size() - 1);
    }
    if (c == null) {
      return;
    }
    disconnectClientLocked(rs, c, reason);
  }

  /**
   * The kubelet's disconnectClient: forgets the client, closes its connection, and calls
   * PluginDisconnected for the resource.
   */
  void disconnectClientLocked(ResourceState rs, Endpoint c, String reason) {
    if (profile.disconnectsTheEndedClient()) {
      rs.clients.remove(c);
    } else {
      rs.clients.clear();
    }
    closeConnectionLocked(c);
    pluginDisconnectedLocked(rs, c, reason);
  }

  /**
   * The kubelet closes its connection to a plugin socket (the plugin sees its stream cancelled).
   */
  private void closeConnectionLocked(Endpoint c) {
    if (c.connectionClosed || c.channel == null) {
      return;
    }
    c.connectionClosed = true;
    c.channel.shutdownNow();
  }

  /**
   * The kubelet's DeRegisterPlugin for a registry socket that vanished: disconnects a client (the
   * one on that plugin's endpoint from v1.37, the newest one of the name before) and calls
   * PluginDisconnected.
   */
  void deregisterPluginLocked(ResourceState rs, Path registrySocket, String reason) {
    Endpoint c = null;
    if (profile.disconnectsTheEndedClient()) {
      Path endpoint = null;
      for (Endpoint ep : rs.open) {
        if (registrySocket.equals(ep.registrySocket)) {
          endpoint = ep.socket;
        }
      }
      for (Endpoint x : rs.clients) {
        if (x.socket.equals(endpoint)) {
          c = x;
          break;
        }
      }
    } else if (!rs.clients.isEmpty()) {
      c = rs.clients.get(rs.clients.size() - 1);
    }
    if (c != null) {
      disconnectClientLocked(rs, c, reason);
    }
  }

  /** Undoes a connection that a registration abandoned by a kubelet restart made. */
  void abandonLocked(ResourceState rs, Endpoint ep, String reason) {
    killLocked(rs, ep);
    rs.clients.remove(ep);
    if (rs.endpoint == ep) {
      pluginDisconnectedLocked(rs, ep, reason);
    }
  }

  /** The kubelet process is gone: the connection closes and nothing it started goes on. */
  private void killLocked(ResourceState rs, Endpoint ep) {
    ep.dead = true;
    ep.streamOpen = false;
    rs.open.remove(ep);
    if (ep.channel != null) {
      ep.connectionClosed = true;
      ep.channel.shutdownNow();
    }
  }

  /**
   * The kubelet's PluginDisconnected: the resource's healthy devices move to unhealthy (allocatable
   * 0, capacity stays) and the CURRENT endpoint gets a stop time (Allocate fails until the next
   * registration); the resource is removed after the grace period.
   */
  void pluginDisconnectedLocked(ResourceState rs, Endpoint client, String reason) {
    Endpoint current = rs.endpoint;
    if (current == null) {
      return;
    }
    List<DeviceState> unhealthy = new ArrayList<>(rs.devices.size());
    for (DeviceState d : rs.devices) {
      unhealthy.add(new DeviceState(d.id(), DeviceState.UNHEALTHY, d.numaNodes()));
    }
    rs.devices = Collections.unmodifiableList(unhealthy);
    current.stopped = true;
    if (rs.removal != null) {
      rs.removal.cancel(false);
    }
    if (!closed) {
      rs.removal =
          transport
              .scheduler()
              .schedule(
                  () -> removeAfterGrace(rs, current), gracePeriod.toNanos(), TimeUnit.NANOSECONDS);
    }
    record(
        Kind.DISCONNECT,
        rs.name,
        Outcome.INFO,
        reason
            + "; "
            + unhealthy.size()
            + " devices marked unhealthy; endpoint "
            + current.socket
            + " stopped"
            + (client == current ? "" : " (the disconnected client was " + client.socket + ")")
            + "; removed in "
            + gracePeriod
            + " unless the plugin registers again",
        Facts.of().endpoint(client.socket).devices(unhealthy.size()).allocatable(0));
    noteHealthLocked(rs, reason);
  }

  private void removeAfterGrace(ResourceState rs, Endpoint ep) {
    lock.lock();
    try {
      if (closed || resources.get(rs.name) != rs || rs.endpoint != ep || !ep.stopped) {
        return;
      }
      resources.remove(rs.name);
      record(
          Kind.RESOURCE_REMOVED,
          rs.name,
          Outcome.INFO,
          "no registration within the grace period of " + gracePeriod);
    } finally {
      lock.unlock();
    }
  }

  /** Appends to the resource's availability journal when allocatable, capacity or stop changed. */
  private void noteHealthLocked(ResourceState rs, String cause) {
    int allocatable = allocatableOf(rs.devices);
    int capacity = capacityOf(rs.devices);
    boolean stopped = rs.endpoint == null || rs.endpoint.stopped;
    HealthPoint last = rs.journal.isEmpty() ? null : rs.journal.get(rs.journal.size() - 1);
    if (last != null
        && last.allocatable == allocatable
        && last.capacity == capacity
        && last.stopped == stopped) {
      return;
    }
    KubeletEvent e =
        record(
            Kind.RESOURCE_HEALTH,
            rs.name,
            Outcome.INFO,
            "allocatable="
                + allocatable
                + " capacity="
                + capacity
                + (stopped ? " endpoint stopped" : "")
                + ": "
                + cause,
            Facts.of()
                .allocatable(allocatable)
                .devices(capacity)
                .endpoint(rs.endpoint == null ? "" : rs.endpoint.socket));
    rs.journal.add(new HealthPoint(e.seq(), e.nanos(), allocatable, capacity, stopped, cause));
  }

  /**
   * Cancels the resource's current {@code ListAndWatch} stream and opens a new one on the same
   * connection, as a kubelet may; a plugin must keep serving.
   *
   * @param resource the resource name
   * @throws IllegalStateException when no plugin is connected for it
   */
  public void cancelListAndWatch(String resource) {
    ClientCallStreamObserver<Empty> call;
    lock.lock();
    try {
      Endpoint ep = connectedEndpoint(resource);
      call = ep.call;
      ep.generation++;
      record(
          Kind.LIST_AND_WATCH_CANCELLED,
          resource,
          Outcome.INFO,
          "the kubelet cancelled the stream and opens a new one",
          Facts.of().endpoint(ep.socket));
      if (call != null) {
        call.cancel("cancelled by the kubelet", null);
      }
      startListAndWatchLocked(ep);
    } finally {
      lock.unlock();
    }
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
    lock.lock();
    try {
      Endpoint ep = connectedEndpoint(resource);
      ep.generation++;
      ep.streamOpen = false;
      String reason = "connection to " + ep.socket + " dropped (dropConnection)";
      record(Kind.LIST_AND_WATCH, resource, Outcome.FAILED, reason, Facts.of().endpoint(ep.socket));
      clientRunEndedLocked(ep, reason);
      closeConnectionLocked(ep);
    } finally {
      lock.unlock();
    }
  }

  private Endpoint connectedEndpoint(String resource) {
    checkOpen();
    return liveEndpoint(resource)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no plugin is connected for "
                        + resource
                        + "; connected: "
                        + connectedResources()
                        + ". Await its registration first."));
  }

  /** The current endpoint of a resource unless it is stopped; call with the lock held. */
  private Optional<Endpoint> liveEndpoint(String resource) {
    ResourceState rs = resources.get(resource);
    if (rs == null || rs.endpoint == null || rs.endpoint.stopped) {
      return Optional.empty();
    }
    return Optional.of(rs.endpoint);
  }

  // ---------------------------------------------------------------------------------------------
  // Allocation

  /**
   * Allocates {@code count} devices chosen by the kubelet to a fresh pod's container.
   *
   * @param resource the resource name
   * @param count how many devices
   * @return the allocation
   * @throws AllocationException when the kubelet refuses, an RPC fails or an answer is invalid
   */
  public Allocation allocate(String resource, int count) {
    return allocate(PodRequest.count(resource, count));
  }

  /**
   * Allocates exactly these devices to a fresh pod's container: the IDs are sent to {@code
   * Allocate} as given (no {@code GetPreferredAllocation}), even unknown ones, to test a plugin's
   * validation.
   *
   * @param resource the resource name
   * @param deviceIds the device IDs
   * @return the allocation
   * @throws AllocationException when the kubelet refuses, an RPC fails or an answer is invalid
   */
  public Allocation allocate(String resource, String... deviceIds) {
    return allocate(PodRequest.devices(resource, deviceIds));
  }

  /**
   * Allocates for one container the way the kubelet's device manager does: chooses from healthy,
   * unallocated devices (asking {@code GetPreferredAllocation} first when the plugin offers it, and
   * checking the answer), calls {@code Allocate} with exactly one container request, requires
   * exactly one container response, then calls {@code PreStartContainer} (30 s deadline) when the
   * plugin requires it. A container that already holds devices of the resource gets them again
   * without RPCs, as in the kubelet.
   *
   * @param request the pod, container and devices
   * @return the allocation
   * @throws AllocationException when the kubelet refuses, an RPC fails or an answer is invalid
   */
  public Allocation allocate(PodRequest request) {
    allocationLock.lock();
    try {
      return allocationFlow.allocate(request);
    } finally {
      allocationLock.unlock();
    }
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
    allocationLock.lock();
    try {
      allocationFlow.restartContainer(podUid, containerName);
    } finally {
      allocationLock.unlock();
    }
  }

  /**
   * Releases every allocation of a pod (all its containers), as when the pod is deleted.
   *
   * @param podUid the pod's UID ({@link Allocation#podUid()})
   * @throws IllegalArgumentException when the fake holds no allocation for that pod
   */
  public void release(String podUid) {
    lock.lock();
    try {
      PodRecord p = pods.remove(podUid);
      if (p == null) {
        throw new IllegalArgumentException(
            "no allocation for pod UID " + podUid + "; pods with allocations: " + pods.keySet());
      }
      for (Allocation a : p.allocations.values()) {
        record(
            Kind.RELEASE,
            a.resourceName(),
            Outcome.OK,
            p.namespace + "/" + p.name + " container " + a.containerName() + ": " + a.deviceIds());
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Releases the devices of one container of a pod (all its resources), as when that container's
   * allocation ends.
   *
   * @param podUid the pod's UID
   * @param containerName the container
   * @throws IllegalArgumentException when the fake holds no allocation for that container
   */
  public void release(String podUid, String containerName) {
    lock.lock();
    try {
      PodRecord p = pods.get(podUid);
      List<String> keys = new ArrayList<>();
      if (p != null) {
        for (Map.Entry<String, Allocation> e : p.allocations.entrySet()) {
          if (e.getValue().containerName().equals(containerName)) {
            keys.add(e.getKey());
          }
        }
      }
      if (keys.isEmpty()) {
        throw new IllegalArgumentException(
            "no allocation for container " + containerName + " of pod UID " + podUid);
      }
      for (String k : keys) {
        Allocation a = p.allocations.remove(k);
        record(
            Kind.RELEASE,
            a.resourceName(),
            Outcome.OK,
            p.namespace + "/" + p.name + " container " + containerName + ": " + a.deviceIds());
      }
      if (p.allocations.isEmpty()) {
        pods.remove(podUid);
      }
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // State

  static final class ResourceState {
    final String name;
    // The current endpoint (PluginConnected), possibly stopped.
    Endpoint endpoint;
    // The kubelet's clients for the name: the newest only up to v1.36, one per socket after.
    final List<Endpoint> clients = new ArrayList<>();
    // Every connection the kubelet still holds for the resource, current or superseded.
    final List<Endpoint> open = new ArrayList<>();
    final List<HealthPoint> journal = new ArrayList<>();
    List<DeviceState> devices = List.of();
    long largestListBytes;
    ScheduledFuture<?> removal;

    ResourceState(String name) {
      this.name = name;
    }
  }

  /** One availability sample of a resource. */
  record HealthPoint(
      long seq, long nanos, int allocatable, int capacity, boolean stopped, String cause) {
    boolean available() {
      return allocatable > 0 && !stopped;
    }
  }

  /** A kubelet client and endpoint for one registration (the kubelet keeps both per plugin). */
  static final class Endpoint {
    final String resource;
    final Path socket;
    // Null for an endpoint the kubelet knows only from its checkpoint (after a restart).
    final ManagedChannel channel;
    final DevicePluginOptions options;
    final Registration registration;
    final Path registrySocket;
    final boolean fromCheckpoint;
    volatile ClientCallStreamObserver<Empty> call;
    int generation;
    boolean streamOpen;
    // The endpoint has a stop time: Allocate and PreStartContainer fail on it.
    boolean stopped;
    // The kubelet closed its connection (Disconnect).
    boolean connectionClosed;
    // Belongs to a kubelet process that is gone (restart, close): its callbacks are ignored.
    boolean dead;

    static Endpoint fromCheckpoint(String resource, Endpoint previous) {
      Endpoint e =
          new Endpoint(
              resource,
              previous == null ? Path.of("(checkpoint)") : previous.socket,
              null,
              DevicePluginOptions.getDefaultInstance(),
              previous == null ? null : previous.registration,
              null,
              true);
      e.stopped = true;
      e.dead = true;
      return e;
    }

    Endpoint(
        String resource,
        Path socket,
        ManagedChannel channel,
        DevicePluginOptions options,
        Registration registration,
        Path registrySocket) {
      this(resource, socket, channel, options, registration, registrySocket, false);
    }

    Endpoint(
        String resource,
        Path socket,
        ManagedChannel channel,
        DevicePluginOptions options,
        Registration registration,
        Path registrySocket,
        boolean fromCheckpoint) {
      this.resource = resource;
      this.socket = socket;
      this.channel = channel;
      this.options = options;
      this.registration = registration;
      this.registrySocket = registrySocket;
      this.fromCheckpoint = fromCheckpoint;
    }
  }

  static final class PodRecord {
    final String namespace;
    final String name;
    final String uid;
    final Map<String, Allocation> allocations = new LinkedHashMap<>();

    PodRecord(String namespace, String name, String uid) {
      this.namespace = namespace;
      this.name = name;
      this.uid = uid;
    }
  }

  @Override
  public String toString() {
    return "FakeKubelet[" + kubeletSocket + "]";
  }
}
