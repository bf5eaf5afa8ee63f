package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.PluginObserver;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.RateLimitedLog;
import io.github.deviceplugin4j.core.internal.SerialExecutor;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import io.grpc.ServerServiceDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * What the registration strategies of one resource share: where things are, the control executor,
 * the registration's state as the resource's status reports it, and how successes, failures and
 * outages are logged (the same way in every mode).
 *
 * <p>State changes only on the control executor; the volatile fields are read from any thread.
 */
public final class RegistrationContext {

  private static final Logger LOG = Loggers.resource();
  private static final Duration WARN_PERIOD = Duration.ofMinutes(1);

  /** How often a lasting condition (waiting for the kubelet, ignored by it) is logged again. */
  static final Duration WAITING_LOG_PERIOD = Duration.ofMinutes(5);

  final String name;
  final Shared shared;
  final EngineConfig config;
  public final Path kubeletSocket;
  final SerialExecutor control;
  public final Backoff backoff;
  final RateLimitedLog registerLog = new RateLimitedLog(LOG, WARN_PERIOD);
  final RequestHandler requests;
  // What every socket of the resource serves.
  final List<ServerServiceDefinition> devicePluginServices;
  // Runs on the control executor after each successful registration.
  private final Runnable afterSuccess;

  // Touched only on the control executor.
  private boolean waiting;
  private long waitingSince;
  private long lastWaitingLog;
  // When the registration was lost (an outage), or -1.
  private long lostSinceNanos = -1;
  // Attempts since the last successful registration (or the start).
  private int attemptsInRound;

  // Read from any thread.
  private volatile boolean closed;
  private volatile boolean registered;
  private volatile int registrations;
  private volatile Instant lastRegistered;
  private volatile String lastError;
  private volatile long lastSuccessNanos = System.nanoTime();

  public RegistrationContext(
      String name,
      Shared shared,
      SerialExecutor control,
      RequestHandler requests,
      List<ServerServiceDefinition> devicePluginServices,
      Runnable afterSuccess) {
    this.name = name;
    this.shared = shared;
    this.config = shared.config();
    this.kubeletSocket = config.pluginDir().resolve(EngineConfig.KUBELET_SOCKET);
    this.control = control;
    this.backoff = new Backoff(config.backoffInitial(), config.backoffMax());
    this.requests = requests;
    this.devicePluginServices = List.copyOf(devicePluginServices);
    this.afterSuccess = afterSuccess;
  }

  public boolean closed() {
    return closed;
  }

  /** The resource is closing: no registration from now on. */
  public void close() {
    closed = true;
    registered = false;
  }

  /** Whether the kubelet has the resource registered, as far as the plugin knows. */
  public boolean registered() {
    return registered;
  }

  public int registrations() {
    return registrations;
  }

  /** Null before the first registration. */
  public Instant lastRegistered() {
    return lastRegistered;
  }

  /** The last error of the resource (registration, backend, devices, requests), or null. */
  public String lastError() {
    return lastError;
  }

  public void error(String message) {
    lastError = message;
  }

  /** {@link System#nanoTime()} of the last successful registration (or of the start). */
  public long lastSuccessNanos() {
    return lastSuccessNanos;
  }

  /** Not registered any more, without an outage to log (the kubelet refused, or was replaced). */
  void unregistered() {
    registered = false;
  }

  /**
   * Tells the observers about a registration attempt that reached the kubelet (or failed to serve
   * the socket for it), with the API version offered (on success: accepted). Call before {@link
   * #succeeded} on success. On the control executor.
   */
  void attempted(
      RegistrationMode mode, String apiVersion, boolean success, String failure, long startNanos) {
    int attempt = ++attemptsInRound;
    if (success) {
      attemptsInRound = 0;
    }
    Observers observers = shared.observers();
    if (observers.enabled()) {
      observers.registration(
          new PluginObserver.Registration(
              name,
              mode,
              apiVersion,
              attempt,
              registrations > 0,
              success,
              success ? "" : String.valueOf(failure),
              System.nanoTime() - startNanos));
    }
  }

  /**
   * A registration succeeded: logged (with the outage it ends, if any) and told to the listeners.
   */
  void succeeded(String how, RegistrationMode mode) {
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
    afterSuccess.run();
  }

  /**
   * A registration attempt failed: recorded and logged. An error is logged at WARN (rate limited)
   * and told to the listeners; waiting for the kubelet is logged once when it starts, then every
   * {@link #WAITING_LOG_PERIOD} ({@code isError} false). What comes next is the strategy's
   * decision.
   */
  void failed(DevicePluginException error, boolean isError) {
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
  }

  /**
   * The registration is lost (an outage starts): logged once, with what happens next if not null,
   * and told to the listeners. Nothing happens when it was not registered.
   */
  void markLost(String reason, String next) {
    if (!registered) {
      return;
    }
    registered = false;
    lostSinceNanos = System.nanoTime();
    LOG.info("{}: lost the kubelet: {}{}", name, reason, next == null ? "" : "; " + next);
    shared.listeners().kubeletLost(name);
  }

  /** Runs a task on the control executor after a delay; null when the timer is shutting down. */
  public ScheduledFuture<?> schedule(Runnable task, Duration delay) {
    try {
      return shared
          .timer()
          .schedule(() -> control.execute(task), delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RuntimeException shuttingDown) {
      return null;
    }
  }
}
