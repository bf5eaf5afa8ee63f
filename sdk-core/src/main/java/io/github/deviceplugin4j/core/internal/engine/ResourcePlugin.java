package io.github.deviceplugin4j.core.internal.engine;

import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.Capabilities;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.ResourceStatus;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.RateLimitedLog;
import io.github.deviceplugin4j.core.internal.SerialExecutor;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.registration.LegacyRegistration;
import io.github.deviceplugin4j.core.internal.registration.RegistrationContext;
import io.github.deviceplugin4j.core.internal.registration.SocketRegistration;
import io.github.deviceplugin4j.core.internal.registration.WatcherRegistration;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.requests.PluginEndpoint;
import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import io.github.deviceplugin4j.core.internal.state.Snapshot;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;

/**
 * One resource: its lifecycle and wiring. Its registration with the kubelet is a {@link
 * SocketRegistration} (legacy, plugin watcher, or AUTO with its fallback), its device discovery a
 * {@link Discovery}; it owns its device list and its request handling.
 *
 * <p>Registration state changes only on the resource's {@link SerialExecutor} ({@code control});
 * every trigger (start, file events, safety check, retry timer, kubelet answers) is a task there.
 * The normal path is event driven: a deleted socket or a new {@code kubelet.sock} starts a
 * registration at once; only failures wait, with capped exponential backoff and jitter, forever.
 */
public final class ResourcePlugin implements PluginEndpoint {

  private static final Logger LOG = Loggers.resource();
  private static final Duration WARN_PERIOD = Duration.ofMinutes(1);

  private final String name;
  private final EngineConfig config;
  private final Shared shared;
  private final SerialExecutor control;
  private final DeviceState devices;
  private final RequestHandler requests;
  private final Discovery discovery;
  private final RegistrationContext registration;
  // AUTO mode replaces a plugin watcher strategy with a legacy one once, on the control executor.
  private volatile SocketRegistration strategy;
  private final RateLimitedLog deviceLog = new RateLimitedLog(LOG, WARN_PERIOD);
  private final RateLimitedLog requestLog = new RateLimitedLog(LOG, WARN_PERIOD);

  private final List<Liveness.Probe> probes;
  private volatile int lastTotal = -1;
  private volatile int lastHealthy = -1;

  /**
   * A resource plugin whose {@code capabilities}, given on the builder, win over the backend's own;
   * {@code mode} is the effective registration mode at the start. Nothing runs until {@link
   * #discover()}.
   */
  public ResourcePlugin(
      DeviceBackend backend, Capabilities capabilities, RegistrationMode mode, Shared shared) {
    this.name = backend.resourceName();
    this.shared = shared;
    this.config = shared.config();
    this.control = new SerialExecutor(shared.workers());
    this.devices =
        new DeviceState(
            config.adapters(),
            new SerialExecutor(shared.workers()),
            shared.timer(),
            config.coalesceWindow(),
            config.maxMessageBytes(),
            new DeviceEvents(),
            name,
            shared.observers(),
            capabilities.sharing());
    this.requests =
        new RequestHandler(
            name,
            backend,
            capabilities,
            devices,
            shared.workers(),
            shared.timer(),
            config.requestDeadlines(),
            this::requestFailed);
    this.discovery = new Discovery(backend, devices, shared, this::backendFailed);
    this.registration =
        new RegistrationContext(
            name, shared, control, requests, devicePluginServices(), this::streamCheckLater);
    this.strategy =
        mode == RegistrationMode.LEGACY
            ? new LegacyRegistration(registration)
            : new WatcherRegistration(
                registration, config.mode() == RegistrationMode.AUTO ? this::fallBack : null);
    this.probes =
        List.of(
            new Liveness.Probe(
                "control loop of " + name + " (registration, file events, listeners)", control),
            new Liveness.Probe(
                "discovery of " + name + " (the backend's devices() has not returned)",
                discovery.reads()));
  }

  /**
   * AUTO mode on a node with a plugins registry directory: the plugin watcher has ignored the
   * socket for {@link EngineConfig#watcherFallback()} while {@code kubelet.sock} exists; from now
   * on, the resource is served and registered the legacy way, in the device plugin directory.
   */
  private void fallBack(long waitedNanos) {
    SocketRegistration watcher = strategy;
    LegacyRegistration legacy = new LegacyRegistration(registration);
    LOG.warn(
        "{}: the kubelet's plugin watcher has not asked for {} in {} s although {} exists (a"
            + " kubelet with another root directory, or one that does not watch {}?); falling back"
            + " to legacy registration on {} (set the registration mode to fix this)",
        name,
        watcher.socket(),
        TimeUnit.NANOSECONDS.toSeconds(waitedNanos),
        registration.kubeletSocket,
        config.registryDir(),
        legacy.socket());
    strategy = legacy;
    watcher.close();
    legacy.takeOver("fallback to legacy registration");
  }

  private List<ServerServiceDefinition> devicePluginServices() {
    Map<String, ServerServiceDefinition> byName = new LinkedHashMap<>();
    for (ApiAdapter a : config.adapters()) {
      byName.computeIfAbsent(a.serviceName(), n -> intercepted(a.devicePluginService(this)));
    }
    return new ArrayList<>(byName.values());
  }

  /** The service with the vendor's interceptors, the first one added seeing a call first. */
  private ServerServiceDefinition intercepted(ServerServiceDefinition service) {
    List<ServerInterceptor> interceptors = config.hooks().interceptors();
    return interceptors.isEmpty()
        ? service
        : ServerInterceptors.interceptForward(service, interceptors);
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

  @Override
  public Observers observers() {
    return shared.observers();
  }

  /** The socket the DevicePlugin service is served on. */
  public Path socket() {
    return strategy.socket();
  }

  /** The registration mode in use, LEGACY or PLUGIN_WATCHER (AUTO may fall back to legacy). */
  public RegistrationMode mode() {
    return strategy.mode();
  }

  // ---------------------------------------------------------------------------------- lifecycle

  /**
   * Starts the backend and loads the first device list, on the caller's thread so that its errors
   * reach the host's {@code start()} (a {@link BackendException} when the backend's {@code start}
   * fails). {@link #serve()} follows, once the host has warmed up.
   */
  public void discover() {
    discovery.start();
  }

  /**
   * Serves the socket on the caller's thread, so that configuration errors reach the host's {@code
   * start()} (a {@link ConfigurationException} when the socket cannot be served: another live
   * instance); registration follows asynchronously.
   */
  public void serve() {
    try {
      strategy.start();
    } catch (IOException e) {
      throw new ConfigurationException(
          "cannot serve " + name + " on " + strategy.socket() + ": " + Loggers.describe(e), e);
    }
    control.execute(
        () -> {
          registration.backoff.reset();
          strategy.register("start");
        });
  }

  /**
   * Stops everything of this resource: streams, servers (superseded ones too), socket file,
   * backend. Runs after any registration step in progress, so that no socket is created behind its
   * back.
   */
  public void close() {
    registration.close();
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
    devices.close();
    strategy.close();
  }

  /** A snapshot of this resource's status. */
  public ResourceStatus status() {
    Snapshot s = devices.current();
    return new ResourceStatus(
        name,
        registration.registered(),
        strategy.mode(),
        registration.registrations(),
        registration.lastRegistered(),
        Optional.ofNullable(registration.lastError()),
        s.devices().size(),
        s.healthy(),
        strategy.socket(),
        s.unhealthyReasons());
  }

  /** Whether the kubelet has this resource registered, and it is not closed. */
  public boolean isReady() {
    return registration.registered() && !registration.closed() && !strategy.replaced();
  }

  /**
   * What a liveness check of this resource pings: its control loop (registration, file events,
   * listeners) and its discovery (the backend's {@code devices()}); created once.
   */
  List<Liveness.Probe> livenessProbes() {
    return probes;
  }

  // ------------------------------------------------------------------------------- file events

  private void onControl(Runnable task) {
    control.execute(
        () -> {
          if (!registration.closed()) {
            task.run();
          }
        });
  }

  /** A file named like this resource's socket was deleted. */
  public void ownSocketDeleted() {
    onControl(
        () -> {
          if (strategy.serving()) {
            return; // an event about a file we replaced already
          }
          strategy.lost("its socket " + strategy.socket() + " was deleted (kubelet restart?)");
          strategy.register("socket deleted");
        });
  }

  /** {@code kubelet.sock} was created. */
  public void kubeletSocketCreated() {
    onControl(() -> strategy.kubeletSocketCreated());
  }

  /** {@code kubelet.sock} was deleted. */
  public void kubeletSocketDeleted() {
    Path kubeletSocket = registration.kubeletSocket;
    onControl(() -> strategy.lost(kubeletSocket + " was deleted (kubelet stopped or restarting)"));
  }

  /**
   * A file was created in the plugin directory: a newer instance of this resource may have taken
   * over.
   */
  public void pluginDirFileCreated(String fileName) {
    if (fileName.endsWith(".sock")) {
      onControl(() -> strategy.pluginDirFileCreated(fileName));
    }
  }

  /** Events may have been missed in the plugin directory: look for a newer instance. */
  public void rescanInstances() {
    onControl(() -> strategy.rescanInstances());
  }

  /** Safety net for missed events: checks the socket files and the registration. */
  public void safetyCheck() {
    onControl(() -> strategy.safetyCheck());
  }

  // ----------------------------------------------------------------------------------- devices

  private void backendFailed(BackendException error) {
    registration.error(error.getMessage());
    shared.listeners().error(name, error);
  }

  private void requestFailed(DevicePluginException error) {
    registration.error(error.getMessage());
    requestLog.warn(error.getMessage(), error);
    shared.listeners().error(name, error);
  }

  private final class DeviceEvents implements DeviceState.Events {
    @Override
    public void invalidDevices(InvalidBackendDataException error) {
      registration.error(error.getMessage());
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
      onControl(
          () -> {
            if (registration.registered()) {
              streamCheckLater();
            }
          });
    }
  }

  /** The kubelet opens ListAndWatch right after registering; if it does not, register again. */
  private void streamCheckLater() {
    registration.schedule(this::checkStreams, config.streamGrace());
  }

  private void checkStreams() {
    if (registration.closed() || !registration.registered() || devices.streams() > 0) {
      return;
    }
    // Only when no stream has been open for the whole grace period since the last registration:
    // a check scheduled earlier must not catch the moment between a registration (or a cancelled
    // stream) and the kubelet's next ListAndWatch; their own checks follow.
    long now = System.nanoTime();
    long quiet =
        Math.min(now - devices.streamlessSinceNanos(), now - registration.lastSuccessNanos());
    if (quiet < config.streamGrace().toNanos()) {
      return;
    }
    strategy.streamsMissing();
  }
}
