package io.github.deviceplugin4j.core;

import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.engine.HostEngine;
import io.github.deviceplugin4j.core.internal.engine.HttpEndpoint;
import io.github.deviceplugin4j.core.internal.engine.RenamedBackend;
import io.github.deviceplugin4j.core.internal.engine.StopSignals;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.requests.ApiVersions;
import io.github.deviceplugin4j.core.internal.requests.RequestDeadlines;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import io.grpc.ServerInterceptor;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one or more device plugins (one per {@link DeviceBackend}) against the kubelet: serves each
 * resource's DevicePlugin service on its own Unix socket, registers it, re-registers it whenever
 * the kubelet restarts, streams device health and answers allocations.
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *   DevicePluginHost.builder().backend(new FpgaBackend(Path.of("/"))).run();
 * }
 * }</pre>
 *
 * <p>or, to control the lifetime yourself:
 *
 * <pre>{@code
 * try (DevicePluginHost host = DevicePluginHost.builder().backend(backend).start()) {
 *   ...
 *   boolean ready = host.isReady();
 * }
 * }</pre>
 *
 * <p>What the host guarantees: the socket is served before registering and never exists with looser
 * permissions than configured; a stale socket of a dead instance is replaced, a live one is a clear
 * startup error; registration follows {@link RegistrationMode}; a deleted plugin socket or a
 * re-created {@code kubelet.sock} triggers a new registration at once, with a periodic safety check
 * for missed events; an absent or refusing kubelet is retried with capped exponential backoff and
 * jitter, forever. The library never exits the process.
 *
 * <p>Several backends in one host share one event loop thread, one worker pool and one file
 * watcher; each has its own Unix socket (never a TCP listener) named after its resource ({@code
 * vendor.example.com_fpga.sock}). The event loop thread is not a daemon thread: a {@code main} that
 * returns after {@code start()} leaves the plugin running until {@link #close()}.
 */
public final class DevicePluginHost implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginHost.class);

  /** Default device plugin directory of the kubelet. */
  public static final Path DEFAULT_PLUGIN_DIR = Path.of("/var/lib/kubelet/device-plugins");

  /** Default plugins registry directory of the kubelet (plugin watcher). */
  public static final Path DEFAULT_REGISTRY_DIR = Path.of("/var/lib/kubelet/plugins_registry");

  /** Environment variable overriding the plugin directory when the builder does not set it. */
  public static final String ENV_PLUGIN_DIR = "DEVICE_PLUGIN_DIR";

  /** Environment variable overriding the registry directory when the builder does not set it. */
  public static final String ENV_REGISTRY_DIR = "PLUGINS_REGISTRY_DIR";

  /**
   * AUTO mode: how long the plugin watcher may ignore the socket before the plugin falls back to
   * legacy registration (see {@link Builder#pluginWatcherFallback(Duration)}).
   */
  public static final Duration DEFAULT_WATCHER_FALLBACK = Duration.ofSeconds(30);

  /**
   * After a stop signal, how long {@code run()}'s JVM may take to end before the signal's default.
   */
  private static final Duration EXIT_FALLBACK = Duration.ofSeconds(5);

  /** How long {@code /healthz} lets each loop take by default. */
  public static final Duration DEFAULT_LIVENESS_BOUND = Duration.ofSeconds(5);

  private final HostEngine engine;
  private final HttpEndpoint http;
  private final CountDownLatch closed = new CountDownLatch(1);

  /**
   * The process's exit status after {@code run()} met a fatal failure: 70 ({@code EX_SOFTWARE} of
   * sysexits.h).
   */
  public static final int EXIT_FATAL = 70;

  private DevicePluginHost(HostEngine engine, HttpEndpoint http) {
    this.engine = engine;
    this.http = http;
    // After a fatal failure the liveness check fails at once (/healthz 503, and it stays up to
    // say so until close()); the engine stops on a thread of its own (the failing thread may be
    // one that its close waits for), which removes the sockets, then awaitClose() returns.
    engine.onFatal(
        cause -> {
          Thread closer =
              new Thread(
                  () -> {
                    try {
                      engine.close();
                    } finally {
                      closed.countDown();
                    }
                  },
                  "deviceplugin4j-fatal-close");
          closer.setDaemon(true);
          closer.start();
        });
  }

  /**
   * The fatal failure that stopped this host, if any: an {@link Error} (an {@code
   * OutOfMemoryError}, say) escaped one of its threads, or its gRPC event loop stopped. The host
   * then logged it at ERROR, made {@link #liveness(Duration)} fail ({@code /healthz} answers 503
   * until {@link #close()}), stopped serving (its sockets are removed) and {@link #awaitClose()}
   * returned; {@link Builder#run()} ends the process with status {@value #EXIT_FATAL}. A {@code
   * main} of its own should exit non-zero too.
   *
   * @return the cause, or empty
   */
  public Optional<Throwable> failure() {
    return engine.failure();
  }

  /**
   * The address the HTTP endpoint listens on, with the actual port (useful with port 0).
   *
   * @return the address, or empty when no endpoint was configured ({@link
   *     Builder#httpEndpoint(InetSocketAddress)})
   */
  public Optional<InetSocketAddress> httpAddress() {
    return http == null ? Optional.empty() : Optional.of(http.address());
  }

  /**
   * A builder with the kubelet's default paths.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Status of every resource, in the order the backends were added.
   *
   * @return one status per resource
   */
  public List<ResourceStatus> status() {
    return engine.status();
  }

  /**
   * Status of one resource.
   *
   * @param resourceName the resource
   * @return its status
   * @throws IllegalArgumentException when this host does not serve the resource
   */
  public ResourceStatus status(String resourceName) {
    return engine.status(resourceName);
  }

  /**
   * Whether every resource is registered with the kubelet and serving; suits a readiness probe.
   *
   * @return true when all resources are registered
   */
  public boolean isReady() {
    return engine.isReady();
  }

  /**
   * Whether the host's threads still work, for a liveness probe: each resource's control loop
   * (registration, file events, listeners) and discovery (the backend's {@code devices()}), the
   * timer, and the gRPC event loop must each run a trivial task within {@code bound}. A backend
   * whose {@code devices()} hangs, a listener that blocks, or a capability wrongly marked {@link
   * NonBlocking} that blocks the event loop makes it fail, naming what is stuck; it passes again as
   * soon as the thread is free. Blocks up to {@code bound}.
   *
   * @param bound how long each may take to run the task; e.g. 5 seconds
   * @return passed, or what is stuck
   */
  public ProbeResult liveness(Duration bound) {
    return engine.liveness(Builder.positive(bound, "bound"));
  }

  /**
   * Whether every resource is registered with the kubelet and serving, for a readiness probe; the
   * same as {@link #isReady()}, naming the resources that are not.
   *
   * @return passed, or which resources are not registered
   */
  public ProbeResult readiness() {
    return engine.readiness();
  }

  /**
   * The registration mode in effect: {@link RegistrationMode#AUTO} resolved at the start, and
   * {@link RegistrationMode#LEGACY} once every resource has fallen back to legacy registration (see
   * {@link Builder#pluginWatcherFallback(Duration)}; each resource's mode is in {@link
   * ResourceStatus#mode()}).
   *
   * @return LEGACY or PLUGIN_WATCHER
   */
  public RegistrationMode registrationMode() {
    return engine.mode();
  }

  /** For tests in this package: open ListAndWatch streams of a resource. */
  int openStreams(String resourceName) {
    return engine.streams(resourceName);
  }

  /**
   * Stops accepting connections, ends the device streams, removes the sockets, stops the backends
   * and every thread the host started. Idempotent.
   */
  @Override
  public void close() {
    try {
      if (http != null) {
        http.close();
      }
      engine.close();
    } finally {
      closed.countDown();
    }
  }

  /**
   * Blocks until {@link #close()} was called, or a fatal failure stopped the host ({@link
   * #failure()}).
   *
   * @throws InterruptedException when interrupted while waiting
   */
  public void awaitClose() throws InterruptedException {
    closed.await();
  }

  /** Builds and starts a {@link DevicePluginHost}. Not thread-safe. */
  public static final class Builder {

    private final List<DeviceBackend> backends = new ArrayList<>();
    private final List<Capabilities> capabilities = new ArrayList<>();
    private final List<PluginListener> listeners = new ArrayList<>();
    private final List<PluginObserver> observers = new ArrayList<>();
    private final List<ServerInterceptor> interceptors = new ArrayList<>();
    private Path pluginDir;
    private Path registryDir;
    private RegistrationMode mode = RegistrationMode.AUTO;
    private Set<PosixFilePermission> socketPermissions =
        PosixFilePermissions.fromString("rw-------");
    private Duration allocateDeadline = RequestDeadlines.DEFAULT_ALLOCATE;
    private Duration preferredAllocationDeadline = RequestDeadlines.DEFAULT_PREFERRED;
    private Duration preStartDeadline = RequestDeadlines.DEFAULT_PRE_START;
    private Map<String, String> environment = System.getenv();
    private List<ApiAdapter> adapters = ApiVersions.supported();
    private Duration safetyInterval = Duration.ofSeconds(5);
    private Duration backoffInitial = Duration.ofMillis(10);
    private Duration backoffMax = Duration.ofSeconds(10);
    private Duration streamGrace = Duration.ofSeconds(5);
    private Duration watcherKick = Duration.ofSeconds(10);
    private Duration watcherFallback = DEFAULT_WATCHER_FALLBACK;
    private int maxMessageBytes = DeviceState.KUBELET_MAX_MESSAGE_BYTES;
    private InetSocketAddress httpAddress;
    private MetricsSource metricsSource;
    private Duration livenessBound = DEFAULT_LIVENESS_BOUND;

    private Builder() {}

    /**
     * Adds a resource. Repeatable: every backend gets its own socket; all share one event loop.
     *
     * @param backend the backend
     * @return this builder
     */
    public Builder backend(DeviceBackend backend) {
      return backend(backend, Capabilities.none());
    }

    /**
     * Adds a resource whose {@link Allocator}, {@link PreferredAllocator} or {@link PreStartHook}
     * is given here rather than implemented by the backend: a backend that decorates another one
     * keeps its capabilities this way. A capability given here wins over the same one implemented
     * by the backend; the others are still detected on the backend. {@link NonBlocking} is read
     * from the object given here.
     *
     * <pre>{@code
     * builder.backend(
     *     new LoggingBackend(fpga),
     *     Capabilities.builder().allocator(fpga).preStartHook(fpga).build());
     * }</pre>
     *
     * @param backend the backend
     * @param capabilities capabilities of this resource
     * @return this builder
     */
    public Builder backend(DeviceBackend backend, Capabilities capabilities) {
      Objects.requireNonNull(backend, "backend");
      Objects.requireNonNull(capabilities, "capabilities");
      if (capabilities.sharing().isRenamed()) {
        // The wrapper implements no capability: the backend's own are handed over here.
        Capabilities.Builder own = Capabilities.builder().sharing(capabilities.sharing());
        capabilities
            .allocator()
            .or(() -> Optional.ofNullable(backend instanceof Allocator a ? a : null))
            .ifPresent(own::allocator);
        capabilities
            .preferredAllocator()
            .or(() -> Optional.ofNullable(backend instanceof PreferredAllocator p ? p : null))
            .ifPresent(own::preferredAllocator);
        capabilities
            .preStartHook()
            .or(() -> Optional.ofNullable(backend instanceof PreStartHook h ? h : null))
            .ifPresent(own::preStartHook);
        backends.add(new RenamedBackend(backend, capabilities.sharing()));
        this.capabilities.add(own.build());
      } else {
        backends.add(backend);
        this.capabilities.add(capabilities);
      }
      return this;
    }

    /**
     * Adds a resource whose devices are each advertised several times (see {@link Sharing}).
     *
     * <pre>{@code
     * builder.backend(new SerialBackend(), Sharing.replicas(4).renamed());
     * }</pre>
     *
     * @param backend the backend
     * @param sharing how its devices are shared
     * @return this builder
     */
    @Experimental
    public Builder backend(DeviceBackend backend, Sharing sharing) {
      return backend(backend, Capabilities.builder().sharing(sharing).build());
    }

    /**
     * The kubelet's device plugin directory, where {@code kubelet.sock} lives. Default: the
     * environment variable {@code DEVICE_PLUGIN_DIR}, else {@code /var/lib/kubelet/device-plugins}.
     *
     * @param dir the directory
     * @return this builder
     */
    public Builder pluginDir(Path dir) {
      this.pluginDir = Objects.requireNonNull(dir, "dir");
      return this;
    }

    /**
     * The kubelet's plugins registry directory (plugin watcher mode). Default: the environment
     * variable {@code PLUGINS_REGISTRY_DIR}, else {@code /var/lib/kubelet/plugins_registry}.
     *
     * @param dir the directory
     * @return this builder
     */
    public Builder registryDir(Path dir) {
      this.registryDir = Objects.requireNonNull(dir, "dir");
      return this;
    }

    /**
     * How to register; default {@link RegistrationMode#AUTO}.
     *
     * @param mode the mode
     * @return this builder
     */
    public Builder registrationMode(RegistrationMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * Permissions of the sockets the plugin creates; default {@code rw-------} (0600). The socket
     * never exists with other permissions, not even for an instant.
     *
     * @param permissions the permissions
     * @return this builder
     */
    public Builder socketPermissions(Set<PosixFilePermission> permissions) {
      Objects.requireNonNull(permissions, "permissions");
      this.socketPermissions = permissions.isEmpty() ? Set.of() : EnumSet.copyOf(permissions);
      return this;
    }

    /**
     * Adds a listener for registrations, kubelet loss, device changes and errors. Repeatable.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder listener(PluginListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Adds an observer of every RPC, registration attempt, device list sent and discovery run, for
     * metrics and tracing (the {@code deviceplugin4j-micrometer} module has one for Micrometer).
     * Repeatable: observers are called in the order added. Without any, the core builds no events
     * at all.
     *
     * <p>Observers are called on the core's threads, the gRPC event loop among them: they must
     * return within microseconds and never block. One that throws is logged once per method and
     * otherwise ignored; the call it observed is answered anyway.
     *
     * @param observer the observer
     * @return this builder
     */
    public Builder observer(PluginObserver observer) {
      observers.add(Objects.requireNonNull(observer, "observer"));
      return this;
    }

    /**
     * Adds a gRPC interceptor to every resource's DevicePlugin service (the kubelet's calls), for
     * tracing, auditing or refusing calls. Repeatable: the first interceptor added sees a call
     * first. An interceptor that closes a call with its own status answers the kubelet with it; the
     * plugin goes on serving the next call. The plugin watcher's registration service is not
     * intercepted.
     *
     * <p>Calls run on the gRPC event loop: an interceptor must not block.
     *
     * <pre>{@code
     * builder.interceptor(new ServerInterceptor() {
     *   public <Q, R> ServerCall.Listener<Q> interceptCall(
     *       ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
     *     log.debug("kubelet calls {}", call.getMethodDescriptor().getFullMethodName());
     *     return next.startCall(call, headers);
     *   }
     * });
     * }</pre>
     *
     * @param interceptor the interceptor
     * @return this builder
     */
    public Builder interceptor(ServerInterceptor interceptor) {
      interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /**
     * Serves an HTTP endpoint for probes and scrapes on this address (off by default): {@code GET
     * /healthz} answers 200 while {@link DevicePluginHost#liveness(Duration)} passes (within {@link
     * #livenessBound(Duration)}) and 503 naming what is stuck; {@code GET /readyz} answers 200 when
     * every resource is registered and 503 naming those that are not; {@code GET /metrics} serves
     * the {@link #metricsSource(MetricsSource)} (404 without one). Other paths get 404, other
     * methods than GET and HEAD get 405; answers are short texts, never a stack trace. It uses the
     * JDK's HTTP server (module {@code jdk.httpserver}) and one daemon thread.
     *
     * <pre>{@code
     * builder.httpEndpoint(new InetSocketAddress(8080))
     *     .metricsSource(prometheusSource);
     * }</pre>
     *
     * @param address where to listen, e.g. {@code new InetSocketAddress(8080)} (all interfaces);
     *     port 0 picks a free port (see {@link DevicePluginHost#httpAddress()})
     * @return this builder
     */
    public Builder httpEndpoint(InetSocketAddress address) {
      this.httpAddress = Objects.requireNonNull(address, "address");
      return this;
    }

    /**
     * What the HTTP endpoint serves at {@code /metrics}, e.g. the {@code deviceplugin4j-micrometer}
     * module's Prometheus scrape. Needs {@link #httpEndpoint(InetSocketAddress)}.
     *
     * @param source the source
     * @return this builder
     */
    public Builder metricsSource(MetricsSource source) {
      this.metricsSource = Objects.requireNonNull(source, "source");
      return this;
    }

    /**
     * How long {@code /healthz} lets each loop take to run a trivial task before it answers 503;
     * default 5 seconds. Keep it under the probe's {@code timeoutSeconds}.
     *
     * @param bound a positive duration
     * @return this builder
     */
    public Builder livenessBound(Duration bound) {
      this.livenessBound = positive(bound, "livenessBound");
      return this;
    }

    /**
     * Deadlines of the {@link Allocator} and {@link PreferredAllocator} calls: sets {@link
     * #allocateDeadline(Duration)} and {@link #preferredAllocationDeadline(Duration)} both. The
     * {@link PreStartHook} keeps its own deadline ({@link #preStartDeadline(Duration)}), since the
     * kubelet's 30 s there are fixed.
     *
     * @param timeout a positive duration
     * @return this builder
     * @deprecated one deadline does not fit every call; use {@link #allocateDeadline(Duration)},
     *     {@link #preferredAllocationDeadline(Duration)} and {@link #preStartDeadline(Duration)}
     */
    @Deprecated
    public Builder allocationTimeout(Duration timeout) {
      this.allocateDeadline = Objects.requireNonNull(timeout, "timeout");
      this.preferredAllocationDeadline = timeout;
      return this;
    }

    /**
     * Deadline of an {@link Allocator} call; a late answer fails that Allocate with {@code
     * DEADLINE_EXCEEDED} and the backend's thread is interrupted. Default 60 seconds: the kubelet
     * sets no deadline on Allocate, but it admits pods one at a time, so a hung backend would stall
     * every pod of the node; a minute is longer than any device preparation that belongs in
     * Allocate (slow work belongs in a {@link PreStartHook}).
     *
     * @param deadline a positive duration
     * @return this builder
     */
    public Builder allocateDeadline(Duration deadline) {
      this.allocateDeadline = positive(deadline, "allocateDeadline");
      return this;
    }

    /**
     * Deadline of a {@link PreferredAllocator} call. When it passes, the kubelet gets a valid
     * fallback choice instead of an error (an error fails the pod's admission, any answer does
     * not), so the kubelet is never left waiting and no pod fails for it. Default 10 seconds.
     *
     * @param deadline a positive duration
     * @return this builder
     */
    public Builder preferredAllocationDeadline(Duration deadline) {
      this.preferredAllocationDeadline = positive(deadline, "preferredAllocationDeadline");
      return this;
    }

    /**
     * Deadline of a {@link PreStartHook} call; a late answer fails that PreStartContainer with
     * {@code DEADLINE_EXCEEDED}. Default 30 seconds, the kubelet's own deadline for the call: a
     * shorter one would cut hooks the kubelet still waits for, a longer one buys nothing.
     *
     * @param deadline a positive duration
     * @return this builder
     */
    public Builder preStartDeadline(Duration deadline) {
      this.preStartDeadline = positive(deadline, "preStartDeadline");
      return this;
    }

    private static Duration positive(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + d);
      }
      return d;
    }

    /**
     * Period of the safety check that catches missed file events (socket deleted, {@code
     * kubelet.sock} replaced, watched directory gone). Default 5 seconds; the normal path does not
     * wait for it.
     *
     * @param interval a positive duration
     * @return this builder
     */
    public Builder safetyCheckInterval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      this.safetyInterval = positive(interval, "safetyCheckInterval");
      return this;
    }

    /**
     * Delays between registration attempts while the kubelet is absent or refuses: exponential from
     * {@code initial} up to {@code max}, with ±20% jitter. Defaults 10 ms and 10 s.
     *
     * @param initial first delay
     * @param max cap
     * @return this builder
     */
    public Builder registrationBackoff(Duration initial, Duration max) {
      Objects.requireNonNull(initial, "initial");
      Objects.requireNonNull(max, "max");
      if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "registrationBackoff needs 0 < initial <= max, was " + initial + ", " + max);
      }
      this.backoffInitial = initial;
      this.backoffMax = max;
      return this;
    }

    /** For tests in this package: the environment to read defaults from. */
    Builder environment(Map<String, String> env) {
      this.environment = Map.copyOf(env);
      return this;
    }

    /** For tests in this package: the API versions offered, most preferred first. */
    Builder apiAdapters(List<ApiAdapter> list) {
      this.adapters = List.copyOf(list);
      return this;
    }

    /** For tests in this package: the largest ListAndWatch message. */
    Builder maxMessageBytes(int bytes) {
      this.maxMessageBytes = bytes;
      return this;
    }

    /** For tests in this package: stream grace and watcher kick delays. */
    Builder reRegistrationDelays(Duration streamGrace, Duration watcherKick) {
      this.streamGrace = streamGrace;
      this.watcherKick = watcherKick;
      return this;
    }

    /**
     * AUTO registration mode: how long the kubelet's plugin watcher may leave the socket in {@code
     * plugins_registry} unregistered, while {@code kubelet.sock} exists, before the plugin falls
     * back to legacy registration (logged once, with the reason). The wait counts from the start,
     * or from the moment {@code kubelet.sock} appears. Default: 30 seconds. An explicit {@link
     * RegistrationMode#PLUGIN_WATCHER} never falls back.
     *
     * @param wait a positive duration
     * @return this builder
     * @throws IllegalArgumentException when {@code wait} is not positive
     */
    public Builder pluginWatcherFallback(Duration wait) {
      Objects.requireNonNull(wait, "wait");
      this.watcherFallback = positive(wait, "pluginWatcherFallback");
      return this;
    }

    /**
     * Checks the configuration, starts every backend, serves every socket; registration with the
     * kubelet follows in the background (see {@link DevicePluginHost#isReady()}).
     *
     * @return the running host
     * @throws ConfigurationException when the configuration is invalid, naming every problem:
     *     invalid or repeated resource names, a missing or read-only directory, a socket path over
     *     the Unix limit, another live instance serving the same socket; or when the HTTP
     *     endpoint's address is taken
     * @throws BackendException when a backend's {@code start} fails
     */
    public DevicePluginHost start() {
      EngineConfig config =
          new EngineConfig(
              backends,
              resolve(pluginDir, ENV_PLUGIN_DIR, DEFAULT_PLUGIN_DIR),
              resolve(registryDir, ENV_REGISTRY_DIR, DEFAULT_REGISTRY_DIR),
              mode,
              socketPermissions,
              listeners,
              allocateDeadline, // what EngineConfig calls allocationTimeout: always the same
              adapters,
              safetyInterval,
              backoffInitial,
              backoffMax,
              Duration.ofSeconds(20),
              streamGrace,
              watcherKick,
              watcherFallback,
              Duration.ofMillis(20),
              maxMessageBytes,
              1,
              new RequestDeadlines(allocateDeadline, preferredAllocationDeadline, preStartDeadline),
              new EngineConfig.Hooks(observers, interceptors, capabilities));
      if (metricsSource != null && httpAddress == null) {
        throw new ConfigurationException(
            "metricsSource(...) is set but no httpEndpoint(...): the metrics would not be served;"
                + " add httpEndpoint(new InetSocketAddress(port))");
      }
      // Bound first: a taken port fails the start before any socket or registration exists.
      HttpEndpoint endpoint = httpAddress == null ? null : HttpEndpoint.bind(httpAddress);
      HostEngine engine;
      try {
        engine = HostEngine.start(config);
      } catch (RuntimeException e) {
        if (endpoint != null) {
          endpoint.close();
        }
        throw e;
      }
      if (endpoint != null) {
        Duration bound = livenessBound;
        endpoint.start(() -> engine.liveness(bound), engine::readiness, metricsSource);
      }
      return new DevicePluginHost(engine, endpoint);
    }

    /**
     * Starts the host and blocks until the JVM is asked to stop (SIGTERM, SIGINT) or the thread is
     * interrupted, then closes it. For {@code main}.
     *
     * <p>On SIGTERM or SIGINT the host closes (its sockets are removed) and this method returns, so
     * a {@code main} that ends after it exits with status 0, as Kubernetes expects of a pod that
     * stopped cleanly. The library never calls {@code System.exit}: if another non-daemon thread
     * keeps the JVM alive 5 seconds later, the signal's default action follows (status 143 for
     * SIGTERM). Where {@code sun.misc.Signal} is unavailable a shutdown hook closes the host and
     * the status is the JVM's (143).
     *
     * <p>After a fatal failure ({@link DevicePluginHost#failure()}: an {@link Error} escaped a
     * thread of the host, or its event loop stopped) the host closes and this method ends the
     * process with status {@value DevicePluginHost#EXIT_FATAL}, so that Kubernetes restarts the pod
     * instead of keeping a plugin that serves nothing: the one case where the library exits the
     * JVM, and only from {@code run()}, which owns the process. If the JVM has not ended 5 seconds
     * later (a shutdown hook that hangs), it is halted.
     *
     * @throws ConfigurationException when the configuration is invalid
     */
    public void run() {
      // The hook covers every other way the JVM stops than a signal (System.exit elsewhere). The
      // handlers are in place before start(), so a signal during startup stops the host too.
      java.util.concurrent.atomic.AtomicReference<DevicePluginHost> running =
          new java.util.concurrent.atomic.AtomicReference<>();
      // A class, not a method reference, made before start(): a method reference is linked at its
      // first use, a few milliseconds of the JDK's method-handle code in the interpreter, and
      // start() returns as the kubelet makes its first calls.
      CloseOnShutdown closeRunning = new CloseOnShutdown(running);
      StopSignals signals =
          StopSignals.install(
              () -> {
                LOG.info("Stop signal received; stopping");
                closeRunning.run();
              });
      Thread hook = new Thread(closeRunning, "deviceplugin4j-shutdown");
      DevicePluginHost host;
      try {
        host = start();
      } catch (RuntimeException e) {
        signals.restore(EXIT_FALLBACK);
        throw e;
      }
      running.set(host);
      if (signals.received()) {
        host.close();
      }
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        host.awaitClose();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        LOG.info("Interrupted; stopping");
      } finally {
        host.close();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // the JVM is stopping; the hook is running or ran
        }
        signals.restore(EXIT_FALLBACK);
      }
      if (host.failure().isPresent()) {
        exitAfterFatal();
      }
    }

    private static void exitAfterFatal() {
      LOG.error("Exiting with status {} after the fatal failure above", EXIT_FATAL);
      Thread halt =
          new Thread(
              () -> {
                try {
                  Thread.sleep(EXIT_FALLBACK.toMillis());
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                Runtime.getRuntime().halt(EXIT_FATAL);
              },
              "deviceplugin4j-exit-halt");
      halt.setDaemon(true);
      halt.start();
      System.exit(EXIT_FATAL);
    }

    private Path resolve(Path explicit, String env, Path fallback) {
      if (explicit != null) {
        return explicit.toAbsolutePath().normalize();
      }
      String value = environment.get(env);
      if (value != null && !value.isBlank()) {
        return Path.of(value.trim()).toAbsolutePath().normalize();
      }
      return fallback;
    }
  }

  /** Closes the host of {@link Builder#run()} once it started: its shutdown hook and signals. */
  private static final class CloseOnShutdown implements Runnable {
    private final java.util.concurrent.atomic.AtomicReference<DevicePluginHost> running;

    CloseOnShutdown(java.util.concurrent.atomic.AtomicReference<DevicePluginHost> running) {
      this.running = running;
    }

    @Override
    public void run() {
      DevicePluginHost host = running.get();
      if (host != null) {
        host.close();
      }
    }
  }
}
