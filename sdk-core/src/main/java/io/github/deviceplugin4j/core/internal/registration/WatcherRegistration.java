package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.RegistrationException;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.requests.ApiVersions;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * Plugin watcher registration: the plugin serves its socket in {@code plugins_registry}, with the
 * {@code pluginregistration.Registration} service next to the DevicePlugin one; the kubelet's
 * plugin watcher finds the socket, asks {@code GetInfo}, and tells the outcome with {@code
 * NotifyRegistrationStatus}. The kubelet finds the socket again by itself after it restarts, so
 * nothing is re-created then.
 *
 * <p>Only while the resource is not registered although a kubelet runs, the socket is re-created (a
 * "kick": the watcher sees a new file) with a doubling delay. With a fallback (AUTO mode), a
 * watcher that has not asked for the socket {@link EngineConfig#watcherFallback()} after the start
 * (or after {@code kubelet.sock} appeared), while {@code kubelet.sock} exists, hands the resource
 * to legacy registration instead.
 *
 * <p>Rolling updates with surge: the {@link Lease} lives in the registry directory's {@code
 * .deviceplugin4j} directory (the plugin watcher ignores names starting with a dot). When the old
 * instance stops, the end of its connection makes the kubelet disconnect the resource by name; the
 * newer instance, given the lease at that moment, moves to a fresh socket name at once (first
 * removing the old one, so the kubelet unregisters that before it registers the new one): the
 * plugin watcher registers it at its next pass, so the resource is offline for about the kubelet's
 * reconcile period (1 s) at most.
 */
public final class WatcherRegistration extends SocketRegistration {

  /** What a kick finds. */
  enum Kick {
    /** No kubelet runs: kubelet.sock's creation re-arms the kick. */
    WAIT_FOR_KUBELET,
    /**
     * The kubelet cannot be seen, but its plugin watcher found the socket before: it finds it again
     * when it is back (re-creating the socket would deregister it).
     */
    LEAVE_TO_WATCHER,
    /** AUTO mode: the plugin watcher ignored the socket for too long: register the legacy way. */
    FALL_BACK,
    /** Re-create the socket so the plugin watcher sees a new file. */
    RECREATE
  }

  /** How often, and how many times, to look whether the previous instance stopped listening. */
  private static final Duration PREVIOUS_EXIT_POLL = Duration.ofMillis(5);

  private static final int PREVIOUS_EXIT_WAITS = 100;

  private final LongConsumer fallback;

  // Touched only on the control executor.
  private Duration kickDelay;
  // When the wait for the watcher's first GetInfo started (start, or kubelet.sock created).
  private long waitSince = System.nanoTime();
  private int kicks;
  private long lastKickLog;

  private volatile boolean contacted;
  // When the plugin watcher last asked GetInfo: the start of its registration attempt.
  private volatile long getInfoNanos = System.nanoTime();

  /**
   * Plugin watcher registration of a resource; {@code fallback}, in AUTO mode, is told (on the
   * control executor, with the nanoseconds waited) when the plugin watcher ignored the socket for
   * too long; null: never fall back.
   */
  public WatcherRegistration(RegistrationContext ctx, LongConsumer fallback) {
    super(
        ctx,
        ctx.config.registryDir(),
        "plugin watcher",
        " for the kubelet's plugin watcher",
        " for the plugin watcher");
    this.fallback = fallback;
    this.kickDelay = ctx.config.watcherKick();
    List<ServerServiceDefinition> services = new ArrayList<>(ctx.devicePluginServices);
    services.add(
        new WatcherRegistrationService(
                name,
                ApiVersions.versions(ctx.config.adapters()),
                () -> {
                  contacted = true;
                  getInfoNanos = System.nanoTime();
                  LOG.debug("{}: kubelet plugin watcher asked for GetInfo", name);
                },
                (ok, error) -> ctx.control.execute(() -> status(ok, error)))
            .bindService());
    this.owner = new SocketOwner(dir.resolve(EngineConfig.socketName(name)), ctx.shared, services);
  }

  @Override
  public RegistrationMode mode() {
    return RegistrationMode.PLUGIN_WATCHER;
  }

  @Override
  void leaseAcquired() {
    leaseAcquired(0);
  }

  private void leaseAcquired(int waits) {
    if (ctx.closed() || stopped) {
      return;
    }
    boolean previousStillListening =
        instances.others(ownName()).stream().anyMatch(SocketFiles::isLive);
    if (previousStillListening && waits < PREVIOUS_EXIT_WAITS) {
      // The lock goes with the process's files: a killed process may release it a moment before
      // its listening socket. Its file is removed below only once nothing listens on it.
      ctx.schedule(() -> leaseAcquired(waits + 1), PREVIOUS_EXIT_POLL);
      return;
    }
    LOG.info(
        "{}: the previous instance released {}; the end of its connection made the kubelet"
            + " disconnect the resource: registering again at once",
        name,
        lease.path());
    ctx.markLost("the previous instance stopped (rolling update)", null);
    // A killed instance left its socket behind (nothing serves it): removed before this one's new
    // socket appears, so the kubelet unregisters it first (a kubelet up to v1.36 unregisters by
    // resource name, which would disconnect the newest registration instead).
    for (Path stale :
        instances.others(ownName()).stream().filter(p -> !SocketFiles.isLive(p)).toList()) {
      try {
        Files.deleteIfExists(stale);
        LOG.info("{}: removed {}, left behind by the previous instance", name, stale);
      } catch (IOException e) {
        LOG.warn("{}: cannot remove {}: {}", name, stale, e.toString());
      }
    }
    moveToFreshSocket();
  }

  /**
   * Serves the resource on a socket of a new name and removes the old one: the plugin watcher
   * registers a new path at its next pass, whereas a socket re-created at the same path is first
   * unregistered and registered only at the pass after. The old server keeps its connections.
   */
  private void moveToFreshSocket() {
    Path next = dir.resolve(instances.newInstanceName());
    Path previous = owner.socket();
    owner = owner.moveTo(next);
    contacted = false;
    try {
      owner.replace();
      LOG.info("{}: serving {} instead of {} for the plugin watcher", name, next, previous);
    } catch (IOException | RuntimeException e) {
      ctx.failed(cannotServe(e), true);
    }
    restartKicks();
  }

  @Override
  void newerInstanceGone() {
    moveToFreshSocket();
  }

  @Override
  public void register(String reason) {
    if (ctx.closed() || stopped || replaced) {
      return;
    }
    LOG.debug("{}: registration attempt ({})", name, reason);
    try {
      ensureServing();
    } catch (IOException | RuntimeException e) {
      ctx.failed(cannotServe(e), true);
      armKick();
      return;
    }
    if (!ctx.registered()) {
      armKick();
    }
  }

  /** The kubelet's NotifyRegistrationStatus. */
  private void status(boolean ok, String error) {
    if (ctx.closed() || stopped) {
      return;
    }
    contacted = true;
    ctx.attempted(
        RegistrationMode.PLUGIN_WATCHER,
        ctx.config.adapters().get(0).version(),
        ok,
        ok ? "" : "the kubelet's plugin watcher refused " + name + ": " + error,
        getInfoNanos);
    if (ok) {
      cancelPending();
      kickDelay = ctx.config.watcherKick();
      kicks = 0;
      ctx.succeeded("plugin watcher, socket " + owner.socket(), RegistrationMode.PLUGIN_WATCHER);
      return;
    }
    ctx.unregistered();
    List<String> sdk = ApiVersions.versions(ctx.config.adapters());
    List<String> kubelet = LegacyRegister.parseVersions(String.valueOf(error));
    ctx.failed(
        new RegistrationException(
            "the kubelet's plugin watcher refused " + name + ": " + error, kubelet, sdk),
        true);
    armKick();
  }

  /** Schedules the next kick, unless one is pending; each waits twice as long as the one before. */
  private void armKick() {
    if (pending != null || ctx.closed() || stopped || replaced) {
      return;
    }
    Duration delay = kickDelay;
    kickDelay = nextDelay(kickDelay, ctx.config.backoffMax());
    pending =
        ctx.schedule(
            () -> {
              pending = null;
              kick(delay);
            },
            delay);
  }

  /** The delay of the kick after one that waited {@code delay}: twice, at most 30 backoff caps. */
  static Duration nextDelay(Duration delay, Duration backoffMax) {
    Duration doubled = delay.multipliedBy(2);
    Duration cap = backoffMax.multipliedBy(30);
    return doubled.compareTo(cap) <= 0 ? doubled : cap;
  }

  private void kick(Duration waited) {
    if (ctx.closed() || stopped || replaced || ctx.registered()) {
      return;
    }
    long waitedNanos = System.nanoTime() - waitSince;
    Kick decision =
        decide(
            Files.isDirectory(ctx.config.pluginDir()),
            SocketFiles.identity(ctx.kubeletSocket) != null,
            contacted,
            fallback != null,
            waitedNanos,
            ctx.config.watcherFallback().toNanos());
    switch (decision) {
      case WAIT_FOR_KUBELET, LEAVE_TO_WATCHER -> {}
      case FALL_BACK -> fallback.accept(waitedNanos);
      case RECREATE -> recreate(waited);
    }
  }

  /**
   * What a kick does. The device plugin directory may not be mounted in this mode ({@code
   * pluginDirVisible}); {@code contacted}: the plugin watcher has asked for this socket before;
   * {@code waitedNanos}: how long the wait for the watcher's first GetInfo has lasted.
   */
  static Kick decide(
      boolean pluginDirVisible,
      boolean kubeletThere,
      boolean contacted,
      boolean mayFallBack,
      long waitedNanos,
      long fallbackNanos) {
    if (pluginDirVisible && !kubeletThere) {
      return Kick.WAIT_FOR_KUBELET;
    }
    if (!pluginDirVisible && contacted) {
      return Kick.LEAVE_TO_WATCHER;
    }
    if (mayFallBack && !contacted && kubeletThere && waitedNanos >= fallbackNanos) {
      return Kick.FALL_BACK;
    }
    return Kick.RECREATE;
  }

  private void recreate(Duration waited) {
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
    } else if (now - lastKickLog > RegistrationContext.WAITING_LOG_PERIOD.toNanos()) {
      lastKickLog = now;
      LOG.warn(
          "{}: the kubelet's plugin watcher has still not registered it ({} re-creations of {});"
              + " is {} the directory the kubelet watches?",
          name,
          kicks,
          owner.socket(),
          ctx.config.registryDir());
    } else {
      LOG.debug(text);
    }
    try {
      owner.replace();
    } catch (IOException | RuntimeException e) {
      ctx.registerLog.warn(
          name + ": cannot re-create " + owner.socket() + ": " + Loggers.describe(e), e);
    }
    armKick();
  }

  /** Starts the kicks over: the first comes after the initial delay. */
  private void restartKicks() {
    cancelPending();
    kickDelay = ctx.config.watcherKick();
    armKick();
  }

  @Override
  public void lost(String reason) {
    ctx.markLost(
        reason,
        owner.stillOurs()
            ? "its plugin watcher finds " + owner.socket() + " again when it is back"
            : null);
  }

  @Override
  public void kubeletSocketCreated() {
    if (ctx.registered()) {
      return;
    }
    // The kubelet's plugin watcher finds the socket by itself; the kick is the last resort, and
    // the wait for a fallback counts from the kubelet's arrival.
    if (!contacted) {
      waitSince = System.nanoTime();
    }
    ctx.backoff.reset();
    restartKicks();
  }

  @Override
  public void safetyCheck() {
    owner.prune();
    checkNewerInstance();
    if (replaced) {
      return;
    }
    if (socketGoneOnCheck()) {
      return;
    }
    if (ctx.registered()
        && SocketFiles.identity(ctx.kubeletSocket) == null
        && Files.isDirectory(ctx.config.pluginDir())) {
      lost(ctx.kubeletSocket + " is gone");
      return;
    }
    if (!ctx.registered() && pending == null) {
      armKick();
    }
  }

  @Override
  public void streamsMissing() {
    // The kubelet went away (it restarts) or dropped the resource: its plugin watcher finds the
    // socket again by itself; re-creating it now would only deregister it once more.
    if (replaced) {
      return;
    }
    lost("the kubelet has no device stream open");
    restartKicks();
  }
}
