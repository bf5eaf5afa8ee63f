package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.RegistrationException;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.ResourceStatus;
import io.grpc.ManagedChannel;
import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One resource: its registration with the kubelet, coordinating its socket ({@link SocketOwner}),
 * its device discovery ({@link Discovery}), its device list and its request handling.
 *
 * <p>Registration state changes only on the resource's {@link SerialExecutor} ({@code control});
 * every trigger (start, file events, safety check, retry timer, kubelet answers) is a task there.
 * The normal path is event driven: a deleted socket or a new {@code kubelet.sock} starts a
 * registration at once; only failures wait, with capped exponential backoff and jitter, forever.
 *
 * <p>Two strategies: legacy ({@code Register} on {@code kubelet.sock}, see {@link LegacyRegister})
 * and plugin watcher (the kubelet finds the socket in {@code plugins_registry}). In AUTO mode a
 * plugin watcher that never asks for the socket, while {@code kubelet.sock} exists, makes the
 * resource fall back to legacy registration once, after {@link EngineConfig#watcherFallback()}.
 */
public final class ResourcePlugin implements PluginEndpoint {

  private static final Logger LOG = LoggerFactory.getLogger(ResourcePlugin.class);
  private static final Duration WARN_PERIOD = Duration.ofMinutes(1);
  private static final Duration WAITING_LOG_PERIOD = Duration.ofMinutes(5);

  private final String name;
  private final Shared shared;
  private final EngineConfig config;
  private final boolean auto;
  private final Path kubeletSocket;
  private final SerialExecutor control;
  private final DeviceState devices;
  private final RequestHandler requests;
  private final Discovery discovery;
  private final LegacyRegister legacy;
  private final InstanceSockets instances;
  private final Backoff backoff;
  private final RateLimitedLog registerLog;
  private final RateLimitedLog deviceLog;
  private final RateLimitedLog requestLog;

  // Control state: touched only on the control executor (or before start / after close).
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
  // Plugin watcher: when the wait for its first GetInfo started (start, or kubelet.sock created).
  private long watcherWaitSince = System.nanoTime();
  private int kicks;
  private long lastKickLog;
  // When the registration was lost (an outage), or -1.
  private long lostSinceNanos = -1;
  // Handover (legacy mode): the serving lease, and what a newer instance did.
  private Lease lease;
  private boolean handoverPending;
  private String newerInstance;

  // Read from any thread.
  private volatile RegistrationMode mode;
  private volatile SocketOwner owner;
  private volatile boolean replaced;
  private volatile boolean watcherContacted;
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
    this.name = backend.resourceName();
    this.shared = shared;
    this.config = shared.config();
    this.mode = mode;
    this.auto = config.mode() == RegistrationMode.AUTO;
    this.kubeletSocket = config.pluginDir().resolve(EngineConfig.KUBELET_SOCKET);
    this.control = new SerialExecutor(shared.workers());
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
    this.discovery = new Discovery(backend, devices, shared, this::backendFailed);
    this.legacy = new LegacyRegister(name, config, kubeletSocket);
    this.instances = new InstanceSockets(config.pluginDir(), EngineConfig.socketName(name));
    this.backoff = new Backoff(config.backoffInitial(), config.backoffMax());
    this.watcherDelay = config.watcherKick();
    this.registerLog = new RateLimitedLog(LOG, WARN_PERIOD);
    this.deviceLog = new RateLimitedLog(LOG, WARN_PERIOD);
    this.requestLog = new RateLimitedLog(LOG, WARN_PERIOD);
    this.owner = new SocketOwner(socketPath(mode), shared, services(mode));
  }

  private Path socketPath(RegistrationMode m) {
    Path dir = m == RegistrationMode.PLUGIN_WATCHER ? config.registryDir() : config.pluginDir();
    return dir.resolve(EngineConfig.socketName(name));
  }

  private List<ServerServiceDefinition> services(RegistrationMode m) {
    Map<String, ServerServiceDefinition> byName = new LinkedHashMap<>();
    for (ApiAdapter a : config.adapters()) {
      byName.computeIfAbsent(a.serviceName(), n -> a.devicePluginService(this));
    }
    List<ServerServiceDefinition> list = new ArrayList<>(byName.values());
    if (m == RegistrationMode.PLUGIN_WATCHER) {
      list.add(
          new WatcherRegistrationService(
                  name,
                  ApiVersions.versions(config.adapters()),
                  () -> {
                    watcherContacted = true;
                    LOG.debug("{}: kubelet plugin watcher asked for GetInfo", name);
                  },
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
    return owner.socket();
  }

  /**
   * The effective registration mode (AUTO may fall back from plugin watcher to legacy).
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
    discovery.start();
    boolean successor = false;
    try {
      if (mode == RegistrationMode.LEGACY) {
        successor = !takeLease();
      }
      owner.replace();
    } catch (IOException e) {
      throw new ConfigurationException(
          "cannot serve " + name + " on " + owner.socket() + ": " + describe(e), e);
    }
    LOG.info("Serving {} on {} ({} mode)", name, owner.socket(), modeName());
    if (successor) {
      awaitHandover();
    }
    requestRegistration("start", true);
  }

  /**
   * Legacy mode: takes the serving lease, or, when another instance of this resource holds it (a
   * rolling update with surge), prepares this instance's own socket name.
   *
   * @return true when this instance holds the lease
   */
  private boolean takeLease() throws IOException {
    String canonical = EngineConfig.socketName(name);
    lease = Lease.open(config.pluginDir(), canonical);
    if (lease.tryAcquire()) {
      return true;
    }
    String own = instances.newInstanceName();
    owner = owner.at(config.pluginDir().resolve(own));
    LOG.info(
        "{}: another instance holds the lease {}; taking over: serving {} and registering it (the"
            + " newest registration wins at the kubelet)",
        name,
        lease.path(),
        own);
    return false;
  }

  private boolean isOtherInstanceSocket(String fileName) {
    return instances.isOtherInstance(fileName, owner.socket().getFileName().toString());
  }

  private void awaitHandover() {
    lease.acquireLater(name, () -> control.execute(this::leaseAcquired));
  }

  /** The previous instance is gone (it released the lease, or died): register again at once. */
  private void leaseAcquired() {
    if (closed) {
      return;
    }
    LOG.info(
        "{}: the previous instance released {}; registering again at once (the end of its"
            + " connection made the kubelet disconnect the resource)",
        name,
        lease.path());
    backoff.reset();
    if (inFlight) {
      handoverPending = true;
      return;
    }
    requestRegistrationNow("handover");
  }

  /**
   * A file was created in the plugin directory: a newer instance of this resource may have taken
   * over.
   *
   * @param fileName the file's name
   */
  public void pluginDirFileCreated(String fileName) {
    if (!fileName.endsWith(".sock")) {
      return;
    }
    control.execute(
        () -> {
          if (!closed && isOtherInstanceSocket(fileName)) {
            checkNewerInstance();
          }
        });
  }

  /** Events may have been missed in the plugin directory: look for a newer instance. */
  public void rescanInstances() {
    control.execute(
        () -> {
          if (!closed) {
            checkNewerInstance();
          }
        });
  }

  /**
   * The lease holder is replaced while a newer instance of the resource serves its own socket; it
   * then stops registering (the newer one is the kubelet's endpoint) but keeps its connections open
   * until it stops: closing them would take the resource offline at the kubelet.
   */
  private void checkNewerInstance() {
    if (mode != RegistrationMode.LEGACY || lease == null || !lease.held()) {
      return;
    }
    String newer = liveOtherInstance();
    if (newer != null && !replaced) {
      replaced = true;
      newerInstance = newer;
      registered = false;
      cancel(retry);
      retry = null;
      LOG.info(
          "{}: a newer instance serves {} and registers it; this one stops registering and keeps"
              + " its connections open until it is stopped (SIGTERM), then hands over",
          name,
          newer);
    } else if (newer == null && replaced) {
      replaced = false;
      LOG.warn(
          "{}: the newer instance ({}) is gone while this one still runs; registering again",
          name,
          newerInstance);
      newerInstance = null;
      backoff.reset();
      requestRegistrationNow("newer instance gone");
    }
  }

  private String liveOtherInstance() {
    return instances.liveOther(owner.socket().getFileName().toString());
  }

  /**
   * Stops everything of this resource: streams, servers (superseded ones too), socket file,
   * backend. Runs after any registration step in progress, so that no socket is created behind its
   * back.
   */
  public void close() {
    closed = true;
    registered = false;
    discovery.close();
    CompletableFuture<Void> done = new CompletableFuture<>();
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
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      closeNow();
    }
    discovery.stopBackend();
  }

  private synchronized void closeNow() {
    cancel(retry);
    cancel(pending);
    if (channel != null) {
      channel.shutdownNow();
    }
    devices.close();
    owner.close();
    // A newer instance waiting for the lease registers again as soon as it is released, which
    // must come after this instance's connections to the kubelet are closed: right after them.
    Lease l = lease;
    if (l != null) {
      l.close();
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
        owner.socket());
  }

  /**
   * Whether the kubelet has this resource registered.
   *
   * @return registered and not closed
   */
  public boolean isReady() {
    return registered && !closed && !replaced;
  }

  /**
   * Superseded servers of this resource whose connections the kubelet still holds.
   *
   * @return count
   */
  public int supersededServers() {
    return owner.supersededCount();
  }

  // ------------------------------------------------------------------------------- file events

  /** A file named like this resource's socket was deleted. */
  public void ownSocketDeleted() {
    control.execute(
        () -> {
          if (closed || owner.stillOurs()) {
            return; // an event about a file we replaced already
          }
          markLost("its socket " + owner.socket() + " was deleted (kubelet restart?)");
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
              // The kubelet's plugin watcher finds the socket by itself; the kick is the last
              // resort, and the wait for a fallback counts from the kubelet's arrival.
              if (!watcherContacted) {
                watcherWaitSince = System.nanoTime();
              }
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
          owner.prune();
          if (replaced) {
            checkNewerInstance(); // still there? (a newer one is found by its file event)
            if (replaced) {
              return; // the newer instance is the kubelet's endpoint
            }
          }
          if (!owner.stillOurs()) {
            if (registered) {
              LOG.warn(
                  "{}: socket {} vanished without a file event; serving it again",
                  name,
                  owner.socket());
            }
            markLost("its socket " + owner.socket() + " is gone");
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
    if (closed || replaced) {
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
                  "cannot serve " + name + " on " + owner.socket() + ": " + describe(e), e);
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
    ManagedChannel ch = shared.channel(kubeletSocket);
    channel = ch;
    legacy
        .register(ch, owner.socket().getFileName().toString(), requests, control)
        .whenComplete(
            (version, error) -> {
              if (closed) {
                ch.shutdownNow();
                return;
              }
              if (error == null) {
                legacyRegistered(kubelet, version);
                return;
              }
              inFlight = false;
              registrationFailed(asPluginException(error), true);
            });
  }

  private static DevicePluginException asPluginException(Throwable error) {
    Throwable e =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    return e instanceof DevicePluginException d
        ? d
        : new DevicePluginException("registration failed: " + describe(e), e);
  }

  /**
   * Serves the socket again if its file is gone. The superseded server keeps the kubelet's
   * connections: ending one of their streams would take the resource offline at the kubelet.
   */
  private void ensureServing() throws IOException {
    if (owner.ensureServing()) {
      LOG.info("Serving {} again on {}", name, owner.socket());
    }
  }

  /**
   * The versions a kubelet's refusal names.
   *
   * @param text the kubelet's error text
   * @return versions, empty when none are named
   */
  static List<String> parseVersions(String text) {
    return LegacyRegister.parseVersions(text);
  }

  private void legacyRegistered(SocketFiles.Identity kubelet, String version) {
    inFlight = false;
    registeredKubelet = kubelet;
    succeeded("API " + version + ", legacy Register on " + kubeletSocket);
    if (handoverPending) {
      // The previous instance went away during this Register: the kubelet may take its
      // connection's end after this registration, so register once more.
      handoverPending = false;
      again = false;
      attempt("handover");
      return;
    }
    // The socket is checked even when no event came: a file renamed over it raises none.
    boolean socketGone = !owner.stillOurs();
    if (again || socketGone) {
      again = false;
      if (socketGone || !Objects.equals(SocketFiles.identity(kubeletSocket), kubelet)) {
        // What the kubelet just accepted is gone already: not registered until the next attempt.
        markLost(
            socketGone
                ? "its socket " + owner.socket() + " was deleted during the registration"
                : kubeletSocket + " changed during the registration");
        attempt("changed during registration");
      }
    }
  }

  private void watcherStatus(boolean ok, String error) {
    if (closed || mode != RegistrationMode.PLUGIN_WATCHER) {
      return;
    }
    watcherContacted = true;
    if (ok) {
      cancel(pending);
      pending = null;
      watcherDelay = config.watcherKick();
      kicks = 0;
      succeeded("plugin watcher, socket " + owner.socket());
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
    long now = System.nanoTime();
    lastSuccessNanos = now;
    waiting = false;
    backoff.reset();
    registerLog.reset();
    if (n == 1) {
      LOG.info("Registered {} with the kubelet ({})", name, how);
    } else if (lostSinceNanos >= 0) {
      LOG.info(
          "Registered {} with the kubelet again after {} ms without it, registration #{} ({})",
          name,
          TimeUnit.NANOSECONDS.toMillis(now - lostSinceNanos),
          n,
          how);
    } else {
      LOG.info("Registered {} with the kubelet again, registration #{} ({})", name, n, how);
    }
    lostSinceNanos = -1;
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
      if (lostSinceNanos >= 0) {
        LOG.debug("{}: {}", name, error.getMessage()); // the outage was logged when it began
      } else {
        LOG.info("{}: {}", name, error.getMessage());
      }
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
   * Plugin watcher mode: the kubelet discovers the socket by itself, also after it restarts. If it
   * has not registered the resource after a while although it runs, re-create the socket so the
   * watcher sees a new file (re-creating it is a deregistration at the kubelet: only while not
   * registered), backing off; in AUTO mode fall back to legacy registration once the watcher has
   * ignored the socket for {@link EngineConfig#watcherFallback()}.
   */
  private void armWatcherKick() {
    if (pending != null || closed || mode != RegistrationMode.PLUGIN_WATCHER) {
      return;
    }
    Duration delay = watcherDelay;
    watcherDelay = min(watcherDelay.multipliedBy(2), config.backoffMax().multipliedBy(30));
    pending =
        schedule(
            () -> {
              pending = null;
              watcherKick(delay);
            },
            delay);
  }

  private void watcherKick(Duration waited) {
    if (closed || registered || mode != RegistrationMode.PLUGIN_WATCHER) {
      return;
    }
    boolean visible = kubeletSocketVisible();
    boolean kubeletThere = SocketFiles.identity(kubeletSocket) != null;
    if (visible && !kubeletThere) {
      return; // no kubelet; kubelet.sock's creation re-arms this
    }
    if (!visible && watcherContacted) {
      // The kubelet cannot be seen, but its plugin watcher found this socket before: it finds it
      // again when it is back (re-creating the socket would deregister it). Only a deleted
      // socket is served again (safety check).
      return;
    }
    long waitedNanos = System.nanoTime() - watcherWaitSince;
    if (auto
        && !watcherContacted
        && kubeletThere
        && waitedNanos >= config.watcherFallback().toNanos()) {
      fallBackToLegacy(waitedNanos);
      return;
    }
    kicks++;
    String text =
        name
            + ": the kubelet has not registered it after "
            + waited.toMillis()
            + " ms; re-creating "
            + owner.socket()
            + " for its plugin watcher";
    long now = System.nanoTime();
    if (kicks == 1) {
      lastKickLog = now;
      LOG.info(text);
    } else if (now - lastKickLog > WAITING_LOG_PERIOD.toNanos()) {
      lastKickLog = now;
      LOG.warn(
          "{}: the kubelet's plugin watcher has still not registered it ({} re-creations of {});"
              + " is {} the directory the kubelet watches?",
          name,
          kicks,
          owner.socket(),
          config.registryDir());
    } else {
      LOG.debug(text);
    }
    try {
      owner.replace();
    } catch (IOException | RuntimeException e) {
      registerLog.warn(name + ": cannot re-create " + owner.socket() + ": " + describe(e), e);
    }
    armWatcherKick();
  }

  /** AUTO mode: the plugin watcher never asked for the socket, but a kubelet runs: go legacy. */
  private void fallBackToLegacy(long waitedNanos) {
    SocketOwner watcherSocket = owner;
    LOG.warn(
        "{}: the kubelet's plugin watcher has not asked for {} in {} s although {} exists (a"
            + " kubelet with another root directory, or one that does not watch {}?); falling back"
            + " to legacy registration on {} (set the registration mode to fix this)",
        name,
        watcherSocket.socket(),
        TimeUnit.NANOSECONDS.toSeconds(waitedNanos),
        kubeletSocket,
        config.registryDir(),
        socketPath(RegistrationMode.LEGACY));
    mode = RegistrationMode.LEGACY;
    owner = new SocketOwner(socketPath(RegistrationMode.LEGACY), shared, services(mode));
    watcherSocket.close();
    try {
      if (!takeLease()) {
        awaitHandover();
      }
    } catch (IOException e) {
      LOG.warn("{}: cannot open the serving lease: {}", name, describe(e));
    }
    backoff.reset();
    requestRegistrationNow("fallback to legacy registration");
  }

  /** Whether the plugin can see kubelet.sock at all (plugin watcher mode may not mount it). */
  private boolean kubeletSocketVisible() {
    return mode == RegistrationMode.LEGACY || Files.isDirectory(config.pluginDir());
  }

  private void markLost(String reason) {
    if (!registered) {
      return;
    }
    registered = false;
    lostSinceNanos = System.nanoTime();
    if (mode == RegistrationMode.PLUGIN_WATCHER && owner.stillOurs()) {
      LOG.info(
          "{}: lost the kubelet: {}; its plugin watcher finds {} again when it is back",
          name,
          reason,
          owner.socket());
    } else {
      LOG.info("{}: lost the kubelet: {}", name, reason);
    }
    shared.listeners().kubeletLost(name);
  }

  // ----------------------------------------------------------------------------------- devices

  /** Asks for a call of the backend's {@code devices()} soon; repeated requests coalesce. */
  public void rescan() {
    discovery.rescan();
  }

  private void backendFailed(BackendException error) {
    lastError = error.getMessage();
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
    if (mode == RegistrationMode.LEGACY) {
      LOG.warn(
          "{}: the kubelet has no device stream open ({} ms after it closed or after"
              + " registering); registering again",
          name,
          config.streamGrace().toMillis());
      markLost("the kubelet has no device stream open");
      requestRegistrationNow("device stream closed");
    } else {
      // The kubelet went away (it restarts) or dropped the resource: its plugin watcher finds the
      // socket again by itself; re-creating it now would only deregister it once more.
      markLost("the kubelet has no device stream open");
      cancel(pending);
      pending = null;
      watcherDelay = config.watcherKick();
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
