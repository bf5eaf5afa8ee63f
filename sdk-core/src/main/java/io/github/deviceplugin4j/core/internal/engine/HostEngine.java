package io.github.deviceplugin4j.core.internal.engine;

import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.ProbeResult;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.ResourceNames;
import io.github.deviceplugin4j.core.ResourceStatus;
import io.github.deviceplugin4j.core.internal.Listeners;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.Threads;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.registration.DirectoryWatcher;
import io.github.deviceplugin4j.core.internal.registration.RegistrationRehearsal;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.requests.SocketWarmUp;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import io.github.deviceplugin4j.core.internal.transport.TransportLogs;
import io.github.deviceplugin4j.core.internal.transport.UdsServer;
import io.grpc.ServerServiceDefinition;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * Runs the resources of one {@code DevicePluginHost}: one event loop group, worker pool, timer and
 * directory watcher shared by all of them, each resource with its own socket.
 */
public final class HostEngine implements AutoCloseable {

  private static final Logger LOG = Loggers.named("HostEngine");

  private final EngineConfig config;
  private final RegistrationMode mode;
  private final Map<String, ResourcePlugin> plugins = new LinkedHashMap<>();
  private final EventLoopGroup group;

  static final long WORKER_KEEP_ALIVE_SECONDS = 5;

  private final ExecutorService workers;
  private final ScheduledThreadPoolExecutor timer;
  private final Listeners listeners;
  private DirectoryWatcher watcher;
  private List<Liveness.Probe> probes;
  private volatile boolean closed;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile Consumer<Throwable> onFatal = t -> {};

  /** How often the engine checks that its event loops still run. */
  static final Duration LOOP_CHECK_PERIOD = Duration.ofSeconds(1);

  private HostEngine(EngineConfig config, RegistrationMode mode) {
    this.config = config;
    this.mode = mode;
    Thread.UncaughtExceptionHandler uncaught = this::uncaught;
    TransportLogs.install(); // before Netty's classes take their loggers
    this.group =
        new MultiThreadIoEventLoopGroup(
            config.eventLoopThreads(),
            Threads.factory("eventloop", false, uncaught),
            NioIoHandler.newFactory());
    // A cached pool (never bounded: a blocked backend call must not starve the kubelet's calls)
    // whose idle threads end after 5 s, not a minute: bursts (every resource registering at once
    // after a kubelet restart) leave no crowd of idle threads behind for long.
    this.workers =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            WORKER_KEEP_ALIVE_SECONDS,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            Threads.factory("worker", true, uncaught));
    this.timer = new ScheduledThreadPoolExecutor(1, Threads.factory("timer", true, uncaught));
    timer.setRemoveOnCancelPolicy(true);
    this.listeners = new Listeners(config.listeners());
  }

  /**
   * Checks the configuration, then starts every resource: backends started, first device lists
   * loaded, sockets served; registration follows asynchronously. A {@link ConfigurationException}
   * names every configuration problem found.
   */
  public static HostEngine start(EngineConfig config) {
    RegistrationMode mode = effectiveMode(config);
    validate(config, mode);
    HostEngine engine = new HostEngine(config, mode);
    try {
      engine.startResources();
      return engine;
    } catch (RuntimeException e) {
      engine.close();
      throw e;
    }
  }

  /** The mode AUTO resolves to: plugin watcher when the registry directory exists, else legacy. */
  public static RegistrationMode effectiveMode(EngineConfig config) {
    if (config.mode() != RegistrationMode.AUTO) {
      return config.mode();
    }
    return Files.isDirectory(config.registryDir())
        ? RegistrationMode.PLUGIN_WATCHER
        : RegistrationMode.LEGACY;
  }

  static void validate(EngineConfig config, RegistrationMode mode) {
    List<String> problems = new ArrayList<>();
    if (config.backends().isEmpty()) {
      problems.add("no backend: add one with DevicePluginHost.builder().backend(...)");
    }
    Set<String> names = new HashSet<>();
    for (DeviceBackend b : config.backends()) {
      String name;
      try {
        name = b.resourceName();
      } catch (RuntimeException e) {
        problems.add(b.getClass().getName() + ".resourceName() threw " + e);
        continue;
      }
      List<String> nameProblems = ResourceNames.problems(name);
      if (!nameProblems.isEmpty()) {
        problems.add(
            "invalid resource name \""
                + name
                + "\" of "
                + b.getClass().getName()
                + ": "
                + String.join("; ", nameProblems));
        continue;
      }
      if (!names.add(name)) {
        problems.add(
            "resource \"" + name + "\" is served by more than one backend; names must be unique");
        continue;
      }
      Path dir =
          mode == RegistrationMode.PLUGIN_WATCHER ? config.registryDir() : config.pluginDir();
      Path socket = dir.resolve(EngineConfig.socketName(name));
      int bytes = SocketFiles.pathBytes(socket);
      int privateBytes = SocketFiles.pathBytes(dir) + UdsServer.PRIVATE_PATH_EXTRA;
      if (Math.max(bytes, privateBytes) > SocketFiles.MAX_PATH_BYTES) {
        problems.add(
            "socket path "
                + socket
                + " is "
                + Math.max(bytes, privateBytes)
                + " bytes; Unix sockets allow at most "
                + SocketFiles.MAX_PATH_BYTES
                + ": use a shorter directory or resource name");
      }
    }
    if (mode == RegistrationMode.PLUGIN_WATCHER) {
      // The plugin directory is optional here: only its kubelet.sock is watched, as a hint.
      checkDir(
          problems, "plugins registry directory", config.registryDir(), "PLUGINS_REGISTRY_DIR");
    } else {
      checkDir(problems, "plugin directory", config.pluginDir(), "DEVICE_PLUGIN_DIR");
    }
    if (config.allocationTimeout().isNegative() || config.allocationTimeout().isZero()) {
      problems.add("allocationTimeout must be positive, was " + config.allocationTimeout());
    }
    if (!problems.isEmpty()) {
      throw new ConfigurationException(
          "cannot start the device plugin: " + String.join("; ", problems));
    }
  }

  private static void checkDir(List<String> problems, String what, Path dir, String env) {
    if (!Files.isDirectory(dir)) {
      problems.add(
          what
              + " "
              + dir
              + " does not exist or is not a directory (mount the kubelet's directory, or set it"
              + " with the builder or "
              + env
              + ")");
    } else if (!Files.isWritable(dir)) {
      problems.add(what + " " + dir + " is not writable (the plugin must create its socket there)");
    }
  }

  private void startResources() {
    List<Path> dirs = new ArrayList<>();
    dirs.add(config.pluginDir());
    if (mode == RegistrationMode.PLUGIN_WATCHER) {
      dirs.add(config.registryDir());
    }
    // Watching before any socket is served: a socket deleted while the first registration is
    // under way (the kubelet restarting, say) must not go unnoticed until the safety check. The
    // events wait for start(), once every resource is in the map.
    try {
      watcher = DirectoryWatcher.prepare(dirs, new Events(), config.safetyInterval());
    } catch (IOException e) {
      throw new ConfigurationException("cannot watch " + dirs + ": " + e, e);
    }
    Shared shared =
        new Shared(
            config,
            group,
            workers,
            timer,
            listeners,
            new Observers(config.hooks().observers(), group));
    for (int i = 0; i < config.backends().size(); i++) {
      ResourcePlugin plugin =
          new ResourcePlugin(
              config.backends().get(i), config.hooks().capabilities(i), mode, shared);
      plugins.put(plugin.resourceName(), plugin);
      plugin.discover();
    }
    // Both warm-ups run before any socket is served, on this thread: served first, the kubelet's
    // first calls came while they ran and shared the cores with them and the JIT's threads (the
    // FPGA example's first Allocate took 3-20 ms instead of about 2). They cost the registration
    // as long as they take (about 40-60 ms in process and up to the socket warm-up's budget, with
    // the image's flags).
    int rounds = Integer.getInteger(WARM_UP_PROPERTY, DEFAULT_WARM_UP_ROUNDS);
    if (rounds > 0) {
      warmUp(List.copyOf(plugins.values()), rounds);
    }
    int socketCalls = Integer.getInteger(WARM_UP_SOCKET_PROPERTY, DEFAULT_WARM_UP_SOCKET_CALLS);
    if (socketCalls > 0 && !plugins.isEmpty() && SOCKET_WARM_UP.compareAndSet(false, true)) {
      long budget = Long.getLong(WARM_UP_SOCKET_MILLIS_PROPERTY, DEFAULT_WARM_UP_SOCKET_MILLIS);
      warmUpOverSocket(
          shared,
          plugins.values().iterator().next(),
          socketCalls,
          TimeUnit.MILLISECONDS.toNanos(Math.max(0, budget)));
    }
    plugins.values().forEach(ResourcePlugin::serve);
    watcher.start();
    // Each resource's check at its own offset within the period: with many resources, checks
    // submitted all at once would make the cached worker pool start a thread for each (100
    // resources: 100 more threads, idle for a minute after every check).
    long period = config.safetyInterval().toNanos();
    List<ResourcePlugin> all = List.copyOf(plugins.values());
    for (int i = 0; i < all.size(); i++) {
      ResourcePlugin p = all.get(i);
      long offset = period * i / all.size();
      timer.scheduleWithFixedDelay(
          guarded("safety check of " + p.resourceName(), p::safetyCheck),
          period + offset,
          period,
          TimeUnit.NANOSECONDS);
    }
    long check = LOOP_CHECK_PERIOD.toNanos();
    timer.scheduleWithFixedDelay(
        guarded("event loop check", this::checkLoops), check, check, TimeUnit.NANOSECONDS);
  }

  /**
   * A periodic task that never ends its schedule quietly: the timer would stop running a task that
   * threw, and keep its exception in a future nobody reads. An exception is logged; an {@link
   * Error} is fatal.
   */
  private Runnable guarded(String what, Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.warn("{} failed; it runs again at its next period", what, e);
      } catch (Error e) {
        fatal(what, e);
      }
    };
  }

  /** An event loop that ended while the engine runs is fatal: its connections are gone. */
  private void checkLoops() {
    if (closed) {
      return;
    }
    int i = 0;
    for (io.netty.util.concurrent.EventExecutor loop : group) {
      if (loop.isShuttingDown() || loop.isTerminated()) {
        fatal(
            "gRPC event loop #" + i,
            new IllegalStateException(
                "the gRPC event loop #" + i + " has stopped; nothing is served any more"));
        return;
      }
      i++;
    }
  }

  private void uncaught(Thread thread, Throwable e) {
    if (e instanceof Error) {
      fatal("thread " + thread.getName(), e);
    } else {
      LOG.warn("Uncaught exception on thread {}; the thread ended", thread.getName(), e);
    }
  }

  /**
   * A failure the engine cannot recover from: an {@link Error} escaped one of its threads, or an
   * event loop stopped. Logged once at ERROR; from then on the liveness check fails (so {@code
   * /healthz} answers 503) and the callback set with {@link #onFatal(Consumer)} runs, once.
   */
  public void fatal(String where, Throwable cause) {
    if (closed || !failure.compareAndSet(null, cause)) {
      return;
    }
    LOG.error(
        "Fatal failure in {}: {}. The plugin cannot go on reliably and stops; let the process"
            + " restart (a DaemonSet's pod is restarted by the kubelet)",
        where,
        cause.toString(),
        cause);
    try {
      onFatal.accept(cause);
    } catch (RuntimeException e) {
      LOG.warn("the fatal-failure callback threw", e);
    }
  }

  /**
   * What to do after a fatal failure ({@link #fatal}); runs on the failing thread, so it must hand
   * anything long to a thread of its own.
   */
  public void onFatal(Consumer<Throwable> callback) {
    this.onFatal = callback;
    Throwable already = failure.get();
    if (already != null) {
      callback.accept(already);
    }
  }

  /** The fatal failure, if one happened. */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure.get());
  }

  /** System property: how many times the warm-up runs each call (0: no warm-up). */
  public static final String WARM_UP_PROPERTY = "deviceplugin4j.warmUpRounds";

  static final int DEFAULT_WARM_UP_ROUNDS = 50;

  /** System property: calls the socket warm-up makes (0: none). */
  public static final String WARM_UP_SOCKET_PROPERTY = "deviceplugin4j.warmUpSocketCalls";

  /**
   * Socket warm-up calls by default: {@code Allocate} when it is declarative, otherwise {@code
   * GetDevicePluginOptions}, one after another on one connection. C1 compiles a method after about
   * 200 calls, and after 2-3 times as many while its queue is long, as it is at start; 600 calls
   * compile most of the per-call path. With the image's flags, through the Go fake-kubelet (in the
   * history of docs/performance.md, 2026-11-25), the first Allocate after registration took 0.8-1.4
   * ms at p50 instead of 2.0-2.1 ms, one after 60 s idle 1.0-1.1 ms instead of 1.4-1.5 ms (the Go
   * stub: 0.4-0.7 ms); the plugin registered 70-100 ms later and held about 1.3 MiB more. 0 turns
   * it off.
   */
  static final int DEFAULT_WARM_UP_SOCKET_CALLS = 600;

  /** System property: the socket warm-up's time budget in milliseconds. */
  public static final String WARM_UP_SOCKET_MILLIS_PROPERTY = "deviceplugin4j.warmUpSocketMillis";

  /**
   * The socket warm-up's budget by default: no call starts after it, so a slow or loaded node
   * registers at most this much later than without the warm-up.
   */
  static final long DEFAULT_WARM_UP_SOCKET_MILLIS = 200;

  /** The transport's code is the JVM's: one socket warm-up per process, by its first host. */
  private static final AtomicBoolean SOCKET_WARM_UP = new AtomicBoolean();

  /**
   * Calls a private server of the first resource over a real Unix socket (in a private directory of
   * the plugin directory, which the kubelet never looks into), one call after another on one
   * connection with grpc-java's client ({@link SocketWarmUp}), then stops it: the code every
   * resource's server shares (the event loop, HTTP/2 frames, gRPC's call path, the messages) is
   * then loaded and compiled. Then, in legacy and AUTO mode, it rehearses a registration ({@link
   * RegistrationRehearsal}): a Register to a private kubelet-like server, which dials this server
   * back, asks its options and reads its first device list, as the kubelet does after each of its
   * starts. Its service reports to no observer and no interceptor sees it; its ListAndWatch watches
   * a private copy of the healthy devices ({@link RehearsalEndpoint}); no vendor code runs. A
   * failure only ends the warm-up early.
   */
  private void warmUpOverSocket(Shared shared, ResourcePlugin plugin, int calls, long budgetNanos) {
    for (ApiAdapter a : config.adapters()) {
      List<ApiAdapter.WarmUpCall> kinds = a.warmUpCalls(plugin);
      if (kinds.isEmpty() || closed) {
        continue;
      }
      RehearsalEndpoint endpoint = new RehearsalEndpoint(plugin, config, timer);
      ServerServiceDefinition service = a.warmUpService(endpoint);
      if (service == null) {
        endpoint.close();
        continue;
      }
      UdsServer.Standby server = null;
      try {
        server =
            UdsServer.bind(config.pluginDir(), config.socketPermissions(), List.of(service), group);
        SocketWarmUp.Outcome outcome =
            SocketWarmUp.run(
                server.path(), kinds, calls, budgetNanos, WARM_UP_SOCKET_GRACE_NANOS, group);
        LOG.debug(
            "socket warm-up: {} calls in {} ms{}",
            outcome.answered(),
            outcome.nanos() / 1_000_000,
            outcome.outOfTime() ? " (the budget ran out)" : "");
        if (mode != RegistrationMode.PLUGIN_WATCHER
            && !closed
            && Boolean.parseBoolean(System.getProperty(WARM_UP_REGISTRATION_PROPERTY, "true"))) {
          long start = System.nanoTime();
          boolean ok =
              RegistrationRehearsal.run(
                  shared,
                  plugin.resourceName(),
                  server.path(),
                  plugin.requests().preStartRequired(),
                  plugin.requests().preferredAllocationAvailable(),
                  // The socket warm-up's budget again: a loaded node registers at most twice
                  // that later (on an idle one, with an AOT cache, it takes a few ms).
                  Math.max(budgetNanos, 1));
          LOG.debug(
              "registration rehearsal {} in {} ms",
              ok ? "done" : "stopped",
              (System.nanoTime() - start) / 1_000_000);
        }
      } catch (IOException | RuntimeException e) {
        LOG.debug("socket warm-up stopped: {}", e.toString());
      } finally {
        if (server != null) {
          server.discard();
        }
        endpoint.close();
      }
    }
  }

  /**
   * System property: {@code false} leaves out the rehearsal of a registration at start ({@link
   * RegistrationRehearsal}); on by default, it runs with the socket warm-up.
   */
  public static final String WARM_UP_REGISTRATION_PROPERTY = "deviceplugin4j.warmUpRegistration";

  /** A server that stopped answering ends the socket warm-up this long after its budget. */
  private static final long WARM_UP_SOCKET_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

  /**
   * Runs each resource's request path in process so the kubelet's first calls find it loaded and
   * compiled: the code is shared, so the first resource gets every round and the others one.
   */
  private void warmUp(List<ResourcePlugin> all, int rounds) {
    long start = System.nanoTime();
    try {
      for (int i = 0; i < all.size(); i++) {
        for (ApiAdapter a : config.adapters()) {
          a.warmUp(all.get(i), i == 0 ? rounds : 1);
        }
      }
      LOG.debug("warm-up: {} rounds in {} ms", rounds, (System.nanoTime() - start) / 1_000_000);
    } catch (RuntimeException e) {
      LOG.debug("warm-up stopped: {}", e.toString());
    }
  }

  /** Routes file events to the resources. */
  private final class Events implements DirectoryWatcher.Listener {
    @Override
    public void created(Path dir, String name) {
      if (dir.equals(config.pluginDir()) && name.equals(EngineConfig.KUBELET_SOCKET)) {
        LOG.debug("{} created", dir.resolve(name));
        plugins.values().forEach(ResourcePlugin::kubeletSocketCreated);
      } else if (dir.equals(config.pluginDir()) || dir.equals(config.registryDir())) {
        // perhaps a newer instance of a resource taking over (a rolling update)
        plugins.values().forEach(p -> p.pluginDirFileCreated(name));
      }
    }

    @Override
    public void deleted(Path dir, String name) {
      if (dir.equals(config.pluginDir()) && name.equals(EngineConfig.KUBELET_SOCKET)) {
        LOG.debug("{} deleted", dir.resolve(name));
        plugins.values().forEach(ResourcePlugin::kubeletSocketDeleted);
        return;
      }
      for (ResourcePlugin p : plugins.values()) {
        if (p.socket().equals(dir.resolve(name))) {
          p.ownSocketDeleted();
        }
      }
    }

    @Override
    public void rescan(Path dir) {
      plugins.values().forEach(ResourcePlugin::safetyCheck);
      if (dir.equals(config.pluginDir()) || dir.equals(config.registryDir())) {
        plugins.values().forEach(ResourcePlugin::rescanInstances);
      }
      // Events were lost (overflow) or the directory came back: a kubelet.sock present now counts
      // as created, so a registration waiting for its backoff goes ahead at once.
      if (Files.exists(
          config.pluginDir().resolve(EngineConfig.KUBELET_SOCKET), LinkOption.NOFOLLOW_LINKS)) {
        plugins.values().forEach(ResourcePlugin::kubeletSocketCreated);
      }
    }
  }

  /**
   * The registration mode in use: the one chosen at the start, or LEGACY once every resource has
   * fallen back to it (AUTO mode whose plugin watcher ignored the sockets).
   */
  public RegistrationMode mode() {
    if (mode == RegistrationMode.PLUGIN_WATCHER
        && !plugins.isEmpty()
        && plugins.values().stream().allMatch(p -> p.mode() == RegistrationMode.LEGACY)) {
      return RegistrationMode.LEGACY;
    }
    return mode;
  }

  /** Status of every resource, in the order the backends were added. */
  public List<ResourceStatus> status() {
    return plugins.values().stream().map(ResourcePlugin::status).toList();
  }

  /** Status of one resource; {@link IllegalArgumentException} when this host serves none. */
  public ResourceStatus status(String resourceName) {
    ResourcePlugin p = plugins.get(resourceName);
    if (p == null) {
      throw new IllegalArgumentException(
          "no resource \"" + resourceName + "\"; this host serves " + plugins.keySet());
    }
    return p.status();
  }

  /**
   * Checks that the control loops, discoveries, timer and gRPC event loop each run a trivial task
   * within the bound, naming what is stuck. Blocks up to the bound.
   */
  public ProbeResult liveness(Duration bound) {
    Throwable fatal = failure.get();
    if (fatal != null) {
      return ProbeResult.of(List.of("fatal failure, the plugin stops: " + fatal));
    }
    if (closed) {
      return ProbeResult.of(List.of("the plugin host is closed"));
    }
    return ProbeResult.of(Liveness.stuck(livenessProbes(), bound));
  }

  private synchronized List<Liveness.Probe> livenessProbes() {
    if (probes == null) {
      List<Liveness.Probe> all = new ArrayList<>();
      plugins.values().forEach(p -> all.addAll(p.livenessProbes()));
      all.add(new Liveness.Probe("timer (deadlines, retries, safety checks)", timer));
      int i = 0;
      for (io.netty.util.concurrent.EventExecutor loop : group) {
        all.add(new Liveness.Probe("gRPC event loop #" + i++ + " (the kubelet's calls)", loop));
      }
      probes = List.copyOf(all);
    }
    return probes;
  }

  /** Whether every resource is registered and serving, naming those that are not. */
  public ProbeResult readiness() {
    if (closed) {
      return ProbeResult.of(List.of("the plugin host is closed"));
    }
    return ProbeResult.of(
        plugins.values().stream()
            .filter(p -> !p.isReady())
            .map(p -> p.resourceName() + " is not registered with the kubelet")
            .toList());
  }

  /** Number of open ListAndWatch streams of a resource; 0 for an unknown one. */
  public int streams(String resourceName) {
    ResourcePlugin p = plugins.get(resourceName);
    return p == null ? 0 : p.devices().streams();
  }

  /** Whether the kubelet has every resource registered. */
  public boolean isReady() {
    return !closed
        && !plugins.isEmpty()
        && plugins.values().stream().allMatch(ResourcePlugin::isReady);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (watcher != null) {
      watcher.close();
    }
    timer.shutdownNow();
    for (ResourcePlugin p : plugins.values()) {
      try {
        p.close();
      } catch (RuntimeException e) {
        LOG.warn("Error closing {}", p.resourceName(), e);
      }
    }
    // The workers end before the event loops do: a worker still finishing a call (a Register
    // attempt, an answer to the kubelet) writes through the loops, and a write or a listener added
    // once a loop has terminated makes Netty log an ERROR with a stack trace on an ordinary stop.
    workers.shutdown();
    try {
      if (!workers.awaitTermination(2, TimeUnit.SECONDS)) {
        workers.shutdownNow();
        workers.awaitTermination(2, TimeUnit.SECONDS);
      }
      timer.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      workers.shutdownNow();
      Thread.currentThread().interrupt();
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    if (!plugins.isEmpty()) {
      LOG.info("Stopped serving {}", plugins.keySet());
    }
    // Last: every thread that could call a listener has ended (or was given its time).
    listeners.stopped();
  }
}
