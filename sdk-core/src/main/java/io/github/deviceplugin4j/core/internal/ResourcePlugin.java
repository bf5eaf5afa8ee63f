package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.RegistrationException;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.ResourceStatus;
import io.grpc.ManagedChannel;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One resource: its socket, its registration with the kubelet, its device list and its request
 * handling.
 *
 * <p>Registration state changes only on the resource's {@link SerialExecutor} ({@code control});
 * every trigger (start, file events, safety check, retry timer, kubelet answers) is a task there.
 * The normal path is event driven: a deleted socket or a new {@code kubelet.sock} starts a
 * registration at once; only failures wait, with capped exponential backoff and jitter, forever.
 */
public final class ResourcePlugin implements PluginEndpoint {

  private static final Logger LOG = LoggerFactory.getLogger(ResourcePlugin.class);
  private static final Duration WARN_PERIOD = Duration.ofMinutes(1);
  private static final Duration WAITING_LOG_PERIOD = Duration.ofMinutes(5);
  private static final Pattern KUBELET_VERSIONS =
      Pattern.compile("[Ss]upported versions? (?:is|are):? *\\[([^\\]]*)\\]");
  private static final Pattern MANAGER_VERSION = Pattern.compile("manager version, ([^,]+),");

  private final String name;
  private final DeviceBackend backend;
  private final Shared shared;
  private final EngineConfig config;
  private final RegistrationMode mode;
  private final Path socket;
  private final Path kubeletSocket;
  private final SerialExecutor control;
  // Backend discovery runs here, one call at a time, so lists are published in the order read.
  private final SerialExecutor discovery;
  private final DeviceState devices;
  private final RequestHandler requests;
  private final List<ServerServiceDefinition> services;
  private final Backoff backoff;
  private final RateLimitedLog registerLog;
  private final RateLimitedLog deviceLog;
  private final RateLimitedLog requestLog;
  private final AtomicBoolean rescanQueued = new AtomicBoolean();
  private final DeviceSink sink;

  // Control state: touched only on the control executor (or before start / after close).
  private UdsServer server;
  private final List<UdsServer> retired = new ArrayList<>();
  private SocketFiles.Identity registeredKubelet;
  private boolean inFlight;
  private boolean again;
  private ScheduledFuture<?> retry;
  private ScheduledFuture<?> pending;
  private ManagedChannel channel;
  private Duration watcherDelay;
  private boolean waiting;
  private long waitingSince;
  private long lastWaitingLog;

  // Read by status() from any thread.
  private volatile boolean registered;
  private volatile int registrations;
  private volatile Instant lastRegistered;
  private volatile String lastError;
  private volatile boolean closed;
  private volatile int lastTotal = -1;
  private volatile int lastHealthy = -1;
  private volatile long lastSuccessNanos = System.nanoTime();

  /**
   * A resource plugin; nothing runs until {@link #start()}.
   *
   * @param backend the vendor's backend
   * @param mode the effective registration mode
   * @param shared the host's shared resources
   */
  public ResourcePlugin(DeviceBackend backend, RegistrationMode mode, Shared shared) {
    this.backend = backend;
    this.name = backend.resourceName();
    this.shared = shared;
    this.config = shared.config();
    this.mode = mode;
    Path dir = mode == RegistrationMode.PLUGIN_WATCHER ? config.registryDir() : config.pluginDir();
    this.socket = dir.resolve(EngineConfig.socketName(name));
    this.kubeletSocket = config.pluginDir().resolve(EngineConfig.KUBELET_SOCKET);
    this.control = new SerialExecutor(shared.workers());
    this.discovery = new SerialExecutor(shared.workers());
    this.devices =
        new DeviceState(
            config.adapters(),
            new SerialExecutor(shared.workers()),
            shared.timer(),
            config.coalesceWindow(),
            config.maxMessageBytes(),
            new DeviceEvents());
    this.requests =
        new RequestHandler(
            name,
            backend,
            devices,
            shared.workers(),
            shared.timer(),
            config.requestDeadlines(),
            this::requestFailed);
    this.backoff = new Backoff(config.backoffInitial(), config.backoffMax());
    this.watcherDelay = config.watcherKick();
    Logger log = LoggerFactory.getLogger(ResourcePlugin.class);
    this.registerLog = new RateLimitedLog(log, WARN_PERIOD);
    this.deviceLog = new RateLimitedLog(log, WARN_PERIOD);
    this.requestLog = new RateLimitedLog(log, WARN_PERIOD);
    this.services = buildServices();
    this.sink =
        new DeviceSink() {
          @Override
          public void publish(List<Device> snapshot) {
            Objects.requireNonNull(snapshot, "snapshot");
            if (!closed) {
              devices.publish(snapshot);
            }
          }

          @Override
          public void rescan() {
            ResourcePlugin.this.rescan();
          }
        };
  }

  private List<ServerServiceDefinition> buildServices() {
    Map<String, ServerServiceDefinition> byName = new LinkedHashMap<>();
    for (ApiAdapter a : config.adapters()) {
      byName.computeIfAbsent(a.serviceName(), n -> a.devicePluginService(this));
    }
    List<ServerServiceDefinition> list = new ArrayList<>(byName.values());
    if (mode == RegistrationMode.PLUGIN_WATCHER) {
      list.add(
          new WatcherRegistrationService(
                  name,
                  ApiVersions.versions(config.adapters()),
                  () -> LOG.debug("{}: kubelet plugin watcher asked for GetInfo", name),
                  (ok, error) -> control.execute(() -> watcherStatus(ok, error)))
              .bindService());
    }
    return list;
  }

  @Override
  public String resourceName() {
    return name;
  }

  @Override
  public DeviceState devices() {
    return devices;
  }

  @Override
  public RequestHandler requests() {
    return requests;
  }

  /**
   * The socket the DevicePlugin service is served on.
   *
   * @return the path
   */
  public Path socket() {
    return socket;
  }

  /**
   * The effective registration mode.
   *
   * @return LEGACY or PLUGIN_WATCHER
   */
  public RegistrationMode mode() {
    return mode;
  }

  // ---------------------------------------------------------------------------------- lifecycle

  /**
   * Starts the backend, loads the first device list and serves the socket, on the caller's thread
   * so that configuration errors reach {@code start()}. Registration follows asynchronously.
   *
   * @throws ConfigurationException when the socket cannot be served (another live instance)
   * @throws BackendException when the backend's {@code start} fails
   */
  public void start() {
    try {
      backend.start(sink);
    } catch (Exception e) {
      throw new BackendException(
          "start", "the backend of " + name + " failed to start: " + describe(e), e);
    }
    try {
      devices.applyNow(readDevices());
    } catch (Exception e) {
      backendFailed("devices", e);
      devices.applyNow(List.of());
    }
    try {
      server = serve(null);
    } catch (IOException e) {
      throw new ConfigurationException(
          "cannot serve " + name + " on " + socket + ": " + describe(e), e);
    }
    LOG.info("Serving {} on {} ({} mode)", name, socket, modeName());
    if (backend.pollInterval() != null && backend.pollInterval().compareTo(Duration.ZERO) > 0) {
      long nanos = backend.pollInterval().toNanos();
      shared.timer().scheduleWithFixedDelay(this::rescan, nanos, nanos, TimeUnit.NANOSECONDS);
    }
    requestRegistration("start", true);
  }

  private UdsServer serve(SocketFiles.Identity replacing) throws IOException {
    return UdsServer.start(socket, config.socketPermissions(), services, shared.group(), replacing);
  }

  /**
   * Stops everything of this resource: streams, server, socket file, backend. Runs after any
   * registration step in progress, so that no socket is created behind its back.
   */
  public void close() {
    closed = true;
    registered = false;
    java.util.concurrent.CompletableFuture<Void> done =
        new java.util.concurrent.CompletableFuture<>();
    try {
      control.execute(
          () -> {
            closeNow();
            done.complete(null);
          });
      done.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeNow();
    } catch (java.util.concurrent.ExecutionException
        | java.util.concurrent.TimeoutException
        | RuntimeException e) {
      closeNow();
    }
    try {
      backend.stop();
    } catch (RuntimeException e) {
      LOG.warn("The backend of {} failed to stop cleanly", name, e);
    }
  }

  private synchronized void closeNow() {
    cancel(retry);
    cancel(pending);
    if (channel != null) {
      channel.shutdownNow();
    }
    devices.close();
    if (server != null) {
      server.close(2000);
      server = null;
    }
    synchronized (retired) {
      for (UdsServer old : retired) {
        old.close(500);
      }
      retired.clear();
    }
  }

  /**
   * This resource's status.
   *
   * @return a snapshot of the status
   */
  public ResourceStatus status() {
    Snapshot s = devices.current();
    return new ResourceStatus(
        name,
        registered,
        mode,
        registrations,
        lastRegistered,
        Optional.ofNullable(lastError),
        s.devices().size(),
        s.healthy(),
        socket);
  }

  /**
   * Whether the kubelet has this resource registered.
   *
   * @return registered and not closed
   */
  public boolean isReady() {
    return registered && !closed;
  }

  // ------------------------------------------------------------------------------- file events

  /** A file named like this resource's socket was deleted. */
  public void ownSocketDeleted() {
    control.execute(
        () -> {
          if (closed || (server != null && server.stillOurs())) {
            return; // an event about a file we replaced already
          }
          markLost("its socket " + socket + " was deleted (kubelet restart?)");
          requestRegistrationNow("socket deleted");
        });
  }

  /** {@code kubelet.sock} was created. */
  public void kubeletSocketCreated() {
    control.execute(
        () -> {
          if (closed) {
            return;
          }
          if (mode == RegistrationMode.PLUGIN_WATCHER) {
            if (!registered) {
              backoff.reset();
              cancel(pending);
              pending = null;
              watcherDelay = config.watcherKick();
              armWatcherKick();
            }
            return;
          }
          if (registered
              && Objects.equals(SocketFiles.identity(kubeletSocket), registeredKubelet)) {
            return; // we registered with this very kubelet.sock already
          }
          requestRegistrationNow("kubelet.sock created");
        });
  }

  /** {@code kubelet.sock} was deleted. */
  public void kubeletSocketDeleted() {
    control.execute(
        () -> {
          if (!closed) {
            markLost(kubeletSocket + " was deleted (kubelet stopped or restarting)");
          }
        });
  }

  /** Safety net for missed events: checks the socket files and the registration. */
  public void safetyCheck() {
    control.execute(
        () -> {
          if (closed) {
            return;
          }
          if (server == null || !server.stillOurs()) {
            if (registered) {
              LOG.warn(
                  "{}: socket {} vanished without a file event; serving it again", name, socket);
            }
            markLost("its socket " + socket + " is gone");
            requestRegistrationNow("safety check: socket gone");
            return;
          }
          SocketFiles.Identity kubelet = SocketFiles.identity(kubeletSocket);
          if (registered && kubelet == null && kubeletSocketVisible()) {
            markLost(kubeletSocket + " is gone");
            return;
          }
          if (mode == RegistrationMode.LEGACY) {
            if (registered && !inFlight && !Objects.equals(kubelet, registeredKubelet)) {
              LOG.info(
                  "{}: {} changed without a file event; registering again", name, kubeletSocket);
              requestRegistrationNow("safety check: kubelet.sock changed");
            } else if (!registered && !inFlight && retry == null) {
              requestRegistrationNow("safety check: not registered");
            }
          } else if (!registered && pending == null) {
            armWatcherKick();
          }
        });
  }

  // ------------------------------------------------------------------------------ registration

  private void requestRegistration(String reason, boolean reset) {
    control.execute(
        () -> {
          if (reset) {
            backoff.reset();
          }
          requestRegistrationNow(reason);
        });
  }

  /** On the control executor: register now, or right after the attempt in flight. */
  private void requestRegistrationNow(String reason) {
    if (closed) {
      return;
    }
    if (inFlight) {
      again = true;
      // The kubelet may be dialling our socket for the Register in flight (it retries for 10 s):
      // if the socket is gone, serve it again now rather than after that call has failed.
      try {
        ensureServing();
      } catch (IOException | RuntimeException e) {
        LOG.debug("{}: cannot serve again during a registration: {}", name, describe(e));
      }
      return;
    }
    cancel(retry);
    retry = null;
    attempt(reason);
  }

  private void attempt(String reason) {
    LOG.debug("{}: registration attempt ({})", name, reason);
    try {
      ensureServing();
    } catch (IOException | RuntimeException e) {
      DevicePluginException error =
          e instanceof DevicePluginException d
              ? d
              : new DevicePluginException(
                  "cannot serve " + name + " on " + socket + ": " + describe(e), e);
      registrationFailed(error, true);
      return;
    }
    if (mode == RegistrationMode.PLUGIN_WATCHER) {
      if (!registered) {
        armWatcherKick();
      }
      return;
    }
    SocketFiles.Identity kubelet = SocketFiles.identity(kubeletSocket);
    if (kubelet == null) {
      registrationFailed(
          new DevicePluginException(
              "waiting for the kubelet: "
                  + kubeletSocket
                  + " does not exist (kubelet not running, or the device plugin directory is not"
                  + " mounted)"),
          false);
      return;
    }
    inFlight = true;
    channel = shared.channel(kubeletSocket);
    tryVersion(channel, kubelet, 0);
  }

  private void ensureServing() throws IOException {
    if (server != null && server.stillOurs()) {
      return;
    }
    UdsServer previous = server;
    server = serve(previous == null ? null : previous.identity());
    LOG.info("Serving {} again on {}", name, socket);
    if (previous != null) {
      retire(previous);
    }
  }

  private void retire(UdsServer old) {
    synchronized (retired) {
      retired.add(old);
    }
    long grace = config.retireGrace().toNanos();
    old.retire(shared.timer(), grace, TimeUnit.NANOSECONDS);
    try {
      shared
          .timer()
          .schedule(
              () -> {
                synchronized (retired) {
                  retired.remove(old);
                }
              },
              grace + TimeUnit.SECONDS.toNanos(1),
              TimeUnit.NANOSECONDS);
    } catch (RuntimeException shuttingDown) {
      // close() closes every retired server
    }
  }

  private void tryVersion(ManagedChannel ch, SocketFiles.Identity kubelet, int index) {
    ApiAdapter adapter = config.adapters().get(index);
    adapter
        .register(
            ch,
            name,
            socket.getFileName().toString(),
            requests.preStartRequired(),
            requests.preferredAllocationAvailable(),
            config.registerDeadline())
        .whenCompleteAsync(
            (ok, error) -> {
              if (closed) {
                ch.shutdownNow();
                return;
              }
              if (error == null) {
                ch.shutdown();
                legacyRegistered(kubelet, adapter.version());
                return;
              }
              Status status = Status.fromThrowable(error);
              boolean versionRefused = isVersionRefusal(status);
              if (versionRefused && index + 1 < config.adapters().size()) {
                LOG.info(
                    "{}: the kubelet refused API version {} ({}); trying {}",
                    name,
                    adapter.version(),
                    status.getDescription(),
                    config.adapters().get(index + 1).version());
                tryVersion(ch, kubelet, index + 1);
                return;
              }
              ch.shutdown();
              inFlight = false;
              registrationFailed(registerError(status, versionRefused), true);
            },
            control);
  }

  private static boolean isVersionRefusal(Status status) {
    String d = String.valueOf(status.getDescription()).toLowerCase(java.util.Locale.ROOT);
    return status.getCode() != Status.Code.UNAVAILABLE
        && d.contains("version")
        && d.contains("not supported");
  }

  private DevicePluginException registerError(Status status, boolean versionRefused) {
    List<String> sdk = ApiVersions.versions(config.adapters());
    String text = status.getCode() + ": " + status.getDescription();
    if (versionRefused) {
      List<String> kubelet = parseVersions(String.valueOf(status.getDescription()));
      return new RegistrationException(
          "no kubelet device plugin API version fits: the kubelet supports "
              + (kubelet.isEmpty() ? "(unknown)" : kubelet)
              + ", this SDK speaks "
              + sdk
              + " (kubelet said: "
              + status.getDescription()
              + "); upgrade deviceplugin4j or the kubelet",
          kubelet,
          sdk);
    }
    if (status.getCode() == Status.Code.UNAVAILABLE
        || status.getCode() == Status.Code.DEADLINE_EXCEEDED
        || status.getCode() == Status.Code.CANCELLED) {
      // CANCELLED: the kubelet went away in the middle of the call (it restarts); not a refusal.
      return new DevicePluginException(
          "cannot reach the kubelet at " + kubeletSocket + " to register " + name + ": " + text);
    }
    return new RegistrationException(
        "the kubelet refused to register " + name + ": " + text, List.of(), sdk);
  }

  static List<String> parseVersions(String text) {
    Matcher m = KUBELET_VERSIONS.matcher(text);
    if (m.find()) {
      List<String> out = new ArrayList<>();
      for (String v : m.group(1).split("[\\s,]+")) {
        String t = v.replace("\"", "").replace("'", "").trim();
        if (!t.isEmpty()) {
          out.add(t);
        }
      }
      return out;
    }
    Matcher manager = MANAGER_VERSION.matcher(text);
    if (manager.find()) {
      return List.of(manager.group(1).trim());
    }
    return List.of();
  }

  private void legacyRegistered(SocketFiles.Identity kubelet, String version) {
    inFlight = false;
    registeredKubelet = kubelet;
    succeeded("API " + version + ", legacy Register on " + kubeletSocket);
    // The socket is checked even when no event came: a file renamed over it raises none.
    boolean socketGone = !server.stillOurs();
    if (again || socketGone) {
      again = false;
      if (socketGone || !Objects.equals(SocketFiles.identity(kubeletSocket), kubelet)) {
        // What the kubelet just accepted is gone already: not registered until the next attempt.
        markLost(
            socketGone
                ? "its socket " + socket + " was deleted during the registration"
                : kubeletSocket + " changed during the registration");
        attempt("changed during registration");
      }
    }
  }

  private void watcherStatus(boolean ok, String error) {
    if (closed) {
      return;
    }
    if (ok) {
      cancel(pending);
      pending = null;
      watcherDelay = config.watcherKick();
      succeeded("plugin watcher, socket " + socket);
      return;
    }
    registered = false;
    List<String> sdk = ApiVersions.versions(config.adapters());
    List<String> kubelet = parseVersions(String.valueOf(error));
    registrationFailed(
        new RegistrationException(
            "the kubelet's plugin watcher refused " + name + ": " + error, kubelet, sdk),
        true);
  }

  private void succeeded(String how) {
    registered = true;
    int n = ++registrations;
    lastRegistered = Instant.now();
    lastSuccessNanos = System.nanoTime();
    waiting = false;
    backoff.reset();
    registerLog.reset();
    if (n == 1) {
      LOG.info("Registered {} with the kubelet ({})", name, how);
    } else {
      LOG.info("Registered {} with the kubelet again, registration #{} ({})", name, n, how);
    }
    shared.listeners().registered(name, mode, n > 1);
    // The kubelet opens ListAndWatch right after registering; if it does not, register again.
    schedule(this::checkStreams, config.streamGrace());
  }

  private void registrationFailed(DevicePluginException error, boolean isError) {
    lastError = error.getMessage();
    if (isError) {
      registerLog.warn(name + ": " + error.getMessage(), error);
      shared.listeners().error(name, error);
    } else if (!waiting) {
      // Waiting for the kubelet starts now (also after failures of another kind).
      waiting = true;
      waitingSince = System.nanoTime();
      lastWaitingLog = waitingSince;
      LOG.info("{}: {}", name, error.getMessage());
    } else if (System.nanoTime() - lastWaitingLog > WAITING_LOG_PERIOD.toNanos()) {
      lastWaitingLog = System.nanoTime();
      LOG.warn(
          "{}: still {} after {} s; retrying",
          name,
          error.getMessage(),
          TimeUnit.NANOSECONDS.toSeconds(lastWaitingLog - waitingSince));
    } else {
      LOG.debug("{}: {}", name, error.getMessage());
    }
    if (again) {
      again = false;
      attempt("event during the failed attempt");
      return;
    }
    if (mode == RegistrationMode.PLUGIN_WATCHER) {
      armWatcherKick();
      return;
    }
    Duration delay = backoff.next();
    cancel(retry);
    retry =
        schedule(
            () -> {
              retry = null;
              requestRegistrationNow("retry");
            },
            delay);
  }

  /**
   * Plugin watcher mode: the kubelet discovers the socket by itself. If it has not registered the
   * resource after a while although it runs, re-create the socket so the watcher sees a new file.
   */
  private void armWatcherKick() {
    if (pending != null || closed) {
      return;
    }
    Duration delay = watcherDelay;
    watcherDelay = min(watcherDelay.multipliedBy(2), config.backoffMax().multipliedBy(30));
    pending =
        schedule(
            () -> {
              pending = null;
              if (closed || registered) {
                return;
              }
              if (SocketFiles.identity(kubeletSocket) == null && kubeletSocketVisible()) {
                return; // no kubelet; kubelet.sock's creation re-arms this
              }
              LOG.info(
                  "{}: the kubelet has not registered it after {} ms; re-creating {} for its"
                      + " plugin watcher",
                  name,
                  delay.toMillis(),
                  socket);
              try {
                UdsServer previous = server;
                server = serve(previous == null ? null : previous.identity());
                if (previous != null) {
                  retire(previous);
                }
              } catch (IOException | RuntimeException e) {
                registerLog.warn(name + ": cannot re-create " + socket + ": " + describe(e), e);
              }
              armWatcherKick();
            },
            delay);
  }

  /** Whether the plugin can see kubelet.sock at all (plugin watcher mode may not mount it). */
  private boolean kubeletSocketVisible() {
    return mode == RegistrationMode.LEGACY || java.nio.file.Files.isDirectory(config.pluginDir());
  }

  private void markLost(String reason) {
    if (!registered) {
      return;
    }
    registered = false;
    LOG.info("{}: lost the kubelet: {}", name, reason);
    shared.listeners().kubeletLost(name);
  }

  // ----------------------------------------------------------------------------------- devices

  /** Asks for a call of the backend's {@code devices()} soon; repeated requests coalesce. */
  public void rescan() {
    if (closed || !rescanQueued.compareAndSet(false, true)) {
      return;
    }
    discovery.execute(
        () -> {
          rescanQueued.set(false);
          if (closed) {
            return;
          }
          try {
            devices.publish(readDevices());
          } catch (Exception e) {
            backendFailed("devices", e);
          }
        });
  }

  private List<Device> readDevices() throws Exception {
    List<Device> list = backend.devices();
    if (list == null) {
      throw new IllegalStateException("devices() returned null");
    }
    return list;
  }

  private void backendFailed(String operation, Exception e) {
    BackendException error =
        new BackendException(
            operation,
            "the backend of "
                + name
                + " failed in "
                + operation
                + "(): "
                + describe(e)
                + "; the last good device list stays",
            e);
    lastError = error.getMessage();
    deviceLog.warn(error.getMessage(), e);
    shared.listeners().error(name, error);
  }

  private void requestFailed(DevicePluginException error) {
    lastError = error.getMessage();
    requestLog.warn(error.getMessage(), error);
    shared.listeners().error(name, error);
  }

  /** Device state events. */
  private final class DeviceEvents implements DeviceState.Events {
    @Override
    public void invalidDevices(InvalidBackendDataException error) {
      lastError = error.getMessage();
      deviceLog.warn(name + ": " + error.getMessage(), null);
      shared.listeners().error(name, error);
    }

    @Override
    public void tooLarge(InvalidBackendDataException error) {
      invalidDevices(error);
    }

    @Override
    public void changed(Snapshot snapshot) {
      int total = snapshot.devices().size();
      int healthy = snapshot.healthy();
      if (total != lastTotal || healthy != lastHealthy) {
        LOG.info("{}: {} devices, {} healthy", name, total, healthy);
      } else {
        LOG.debug("{}: device list changed ({} devices, {} healthy)", name, total, healthy);
      }
      lastTotal = total;
      lastHealthy = healthy;
      shared.listeners().devicesChanged(name, total, healthy);
    }

    @Override
    public void streamsGone() {
      control.execute(
          () -> {
            if (closed || !registered) {
              return;
            }
            schedule(ResourcePlugin.this::checkStreams, config.streamGrace());
          });
    }
  }

  private void checkStreams() {
    if (closed || !registered || devices.streams() > 0 || inFlight) {
      return;
    }
    // Only when no stream has been open for the whole grace period since the last registration:
    // a check scheduled earlier must not catch the moment between a registration (or a cancelled
    // stream) and the kubelet's next ListAndWatch; their own checks follow.
    long now = System.nanoTime();
    long quiet = Math.min(now - devices.streamlessSinceNanos(), now - lastSuccessNanos);
    if (quiet < config.streamGrace().toNanos()) {
      return;
    }
    LOG.warn(
        "{}: the kubelet has no device stream open ({} ms after it closed or after registering);"
            + " registering again",
        name,
        config.streamGrace().toMillis());
    markLost("the kubelet has no device stream open");
    if (mode == RegistrationMode.LEGACY) {
      requestRegistrationNow("device stream closed");
    } else {
      cancel(pending);
      pending = null;
      watcherDelay = Duration.ofMillis(1);
      armWatcherKick();
    }
  }

  // ----------------------------------------------------------------------------------- helpers

  private ScheduledFuture<?> schedule(Runnable task, Duration delay) {
    try {
      return shared
          .timer()
          .schedule(() -> control.execute(task), delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RuntimeException shuttingDown) {
      return null;
    }
  }

  private static void cancel(ScheduledFuture<?> f) {
    if (f != null) {
      f.cancel(false);
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private String modeName() {
    return mode == RegistrationMode.LEGACY ? "legacy" : "plugin watcher";
  }

  static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
