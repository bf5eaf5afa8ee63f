package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.RegistrationMode;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;

/**
 * Legacy registration: the plugin serves its socket in the device plugin directory and calls {@code
 * Register} on {@code kubelet.sock} (see {@link LegacyRegister}), again on every sign of a kubelet
 * restart (its socket deleted, {@code kubelet.sock} created or changed, no device stream), retrying
 * failures with capped exponential backoff, forever.
 *
 * <p>It also owns the handover between two instances of the resource (a rolling update with surge):
 * the {@link Lease} holder serves the resource's own socket name; a newer instance serves its own
 * socket, registers it, and registers again once the old one has released the lease; the old one,
 * replaced, stops registering but keeps its connections open until it stops.
 */
final class LegacyRegistration extends SocketRegistration {

  /** What a safety check finds. */
  enum Check {
    /** Nothing to do. */
    NOTHING,
    /** The kubelet.sock registered with is gone: the registration is lost. */
    KUBELET_GONE,
    /** kubelet.sock is another file than the one registered with: register again. */
    KUBELET_CHANGED,
    /** Not registered and nothing under way to fix it: register. */
    NOT_REGISTERED
  }

  /** What follows a successful Register. */
  enum AfterRegister {
    /** Registered. */
    DONE,
    /** The previous instance went away during the call: register once more. */
    AGAIN_FOR_HANDOVER,
    /** What the kubelet accepted is gone already: lost, register again. */
    LOST_AGAIN
  }

  private final LegacyRegister legacy;
  private final InstanceSockets instances;

  // Touched only on the control executor (or before start / after close).
  private SocketFiles.Identity registeredKubelet;
  private boolean inFlight;
  private boolean again;
  private ScheduledFuture<?> retry;
  // The last attempt failed to serve the socket (its directory gone, say), not to register.
  private boolean servingFailed;
  private Lease lease;
  private boolean handoverPending;
  private String newerInstance;
  private volatile boolean replaced;

  /**
   * Legacy registration of a resource, serving its own socket name in the plugin directory.
   *
   * @param ctx the resource's registration context
   */
  LegacyRegistration(RegistrationContext ctx) {
    super(
        ctx,
        new SocketOwner(
            ctx.config.pluginDir().resolve(EngineConfig.socketName(ctx.name)),
            ctx.shared,
            ctx.devicePluginServices));
    this.legacy = new LegacyRegister(name, ctx.shared, ctx.kubeletSocket);
    this.instances = new InstanceSockets(ctx.config.pluginDir(), EngineConfig.socketName(name));
  }

  @Override
  public RegistrationMode mode() {
    return RegistrationMode.LEGACY;
  }

  @Override
  public boolean replaced() {
    return replaced;
  }

  @Override
  public void start() throws IOException {
    boolean successor = !takeLease();
    owner.replace();
    LOG.info("Serving {} on {} (legacy mode)", name, owner.socket());
    if (successor) {
      awaitHandover();
    }
  }

  /**
   * AUTO mode: the plugin watcher ignored the resource; this strategy takes over from it: takes the
   * lease (or waits for it) and registers at once. On the control executor.
   *
   * @param reason why, for the log
   */
  void takeOver(String reason) {
    try {
      if (!takeLease()) {
        awaitHandover();
      }
    } catch (IOException e) {
      LOG.warn("{}: cannot open the serving lease: {}", name, ResourcePlugin.describe(e));
    }
    ctx.backoff.reset();
    register(reason);
  }

  // -------------------------------------------------------------------------------- handover

  /**
   * Takes the serving lease, or, when another instance of this resource holds it (a rolling update
   * with surge), prepares this instance's own socket name.
   *
   * @return true when this instance holds the lease
   */
  private boolean takeLease() throws IOException {
    String canonical = EngineConfig.socketName(name);
    lease = Lease.open(ctx.config.pluginDir(), canonical);
    if (lease.tryAcquire()) {
      return true;
    }
    String own = instances.newInstanceName();
    owner = owner.at(ctx.config.pluginDir().resolve(own));
    LOG.info(
        "{}: another instance holds the lease {}; taking over: serving {} and registering it (the"
            + " newest registration wins at the kubelet)",
        name,
        lease.path(),
        own);
    return false;
  }

  private void awaitHandover() {
    lease.acquireLater(name, () -> ctx.control.execute(this::leaseAcquired));
  }

  /** The previous instance is gone (it released the lease, or died): register again at once. */
  private void leaseAcquired() {
    if (ctx.closed()) {
      return;
    }
    LOG.info(
        "{}: the previous instance released {}; registering again at once (the end of its"
            + " connection made the kubelet disconnect the resource)",
        name,
        lease.path());
    ctx.backoff.reset();
    if (inFlight) {
      handoverPending = true;
      return;
    }
    register("handover");
  }

  @Override
  public void pluginDirFileCreated(String fileName) {
    if (instances.isOtherInstance(fileName, owner.socket().getFileName().toString())) {
      checkNewerInstance();
    }
  }

  @Override
  public void rescanInstances() {
    checkNewerInstance();
  }

  /**
   * The lease holder is replaced while a newer instance of the resource serves its own socket; it
   * then stops registering (the newer one is the kubelet's endpoint) but keeps its connections open
   * until it stops: closing them would take the resource offline at the kubelet.
   */
  private void checkNewerInstance() {
    if (lease == null || !lease.held()) {
      return;
    }
    String newer = instances.liveOther(owner.socket().getFileName().toString());
    if (newer != null && !replaced) {
      replaced = true;
      newerInstance = newer;
      ctx.unregistered();
      RegistrationContext.cancel(retry);
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
      ctx.backoff.reset();
      register("newer instance gone");
    }
  }

  // ---------------------------------------------------------------------------- registration

  @Override
  public void register(String reason) {
    if (ctx.closed() || replaced) {
      return;
    }
    if (inFlight) {
      again = true;
      // The kubelet may be dialling our socket for the Register in flight (it retries for 10 s):
      // if the socket is gone, serve it again now rather than after that call has failed.
      try {
        ensureServing();
      } catch (IOException | RuntimeException e) {
        LOG.debug(
            "{}: cannot serve again during a registration: {}", name, ResourcePlugin.describe(e));
      }
      return;
    }
    RegistrationContext.cancel(retry);
    retry = null;
    attempt(reason);
  }

  private void attempt(String reason) {
    LOG.debug("{}: registration attempt ({})", name, reason);
    long start = System.nanoTime();
    servingFailed = false;
    try {
      ensureServing();
    } catch (IOException | RuntimeException e) {
      servingFailed = true;
      DevicePluginException error =
          e instanceof DevicePluginException d
              ? d
              : new DevicePluginException(
                  "cannot serve "
                      + name
                      + " on "
                      + owner.socket()
                      + ": "
                      + ResourcePlugin.describe(e),
                  e);
      ctx.attempted(
          RegistrationMode.LEGACY, legacy.lastOffered(), false, error.getMessage(), start);
      failed(error, true);
      return;
    }
    SocketFiles.Identity kubelet = SocketFiles.identity(ctx.kubeletSocket);
    if (kubelet == null) {
      failed(
          new DevicePluginException(
              "waiting for the kubelet: "
                  + ctx.kubeletSocket
                  + " does not exist (kubelet not running, or the device plugin directory is not"
                  + " mounted)"),
          false);
      return;
    }
    inFlight = true;
    legacy
        .register(owner.socket().getFileName().toString(), ctx.requests, ctx.control)
        .whenComplete(
            (version, error) -> {
              if (ctx.closed()) {
                return;
              }
              inFlight = false;
              if (error == null) {
                ctx.attempted(RegistrationMode.LEGACY, version, true, "", start);
                registered(kubelet, version);
                return;
              }
              DevicePluginException e = asPluginException(error);
              ctx.attempted(
                  RegistrationMode.LEGACY, legacy.lastOffered(), false, e.getMessage(), start);
              if (e instanceof LegacyRegister.Unreachable && kubeletGone(kubelet)) {
                // A stale kubelet.sock (the kubelet stopped or is restarting): as when the file
                // is missing, a wait, not an error; its creation will trigger the next attempt.
                failed(
                    new DevicePluginException(
                        "waiting for the kubelet: "
                            + ctx.kubeletSocket
                            + " does not accept connections (kubelet stopped or restarting)"),
                    false);
              } else {
                failed(e, true);
              }
            });
  }

  /**
   * Whether the kubelet.sock an attempt used is replaced, gone, or a socket nobody listens on (not
   * something else in its place: that stays an error to fix).
   */
  private boolean kubeletGone(SocketFiles.Identity used) {
    SocketFiles.Identity now = SocketFiles.identity(ctx.kubeletSocket);
    return now == null
        || !SocketFiles.sameFile(now, used)
        || (SocketFiles.isSocket(ctx.kubeletSocket) && !SocketFiles.isLive(ctx.kubeletSocket));
  }

  private static DevicePluginException asPluginException(Throwable error) {
    Throwable e =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    return e instanceof DevicePluginException d
        ? d
        : new DevicePluginException("registration failed: " + ResourcePlugin.describe(e), e);
  }

  private void registered(SocketFiles.Identity kubelet, String version) {
    registeredKubelet = kubelet;
    ctx.succeeded(
        "API " + version + ", legacy Register on " + ctx.kubeletSocket, RegistrationMode.LEGACY);
    // The socket is checked even when no event came: a file renamed over it raises none.
    boolean socketGone = !owner.stillOurs();
    boolean kubeletChanged =
        again && !socketGone && !Objects.equals(SocketFiles.identity(ctx.kubeletSocket), kubelet);
    AfterRegister next = afterRegister(handoverPending, again, socketGone, kubeletChanged);
    again = false;
    handoverPending = false;
    switch (next) {
      case AGAIN_FOR_HANDOVER -> attempt("handover");
      case LOST_AGAIN -> {
        // What the kubelet just accepted is gone already: not registered until the next attempt.
        lost(
            socketGone
                ? "its socket " + owner.socket() + " was deleted during the registration"
                : ctx.kubeletSocket + " changed during the registration");
        attempt("changed during registration");
      }
      case DONE -> {}
    }
  }

  /**
   * What follows a successful Register.
   *
   * @param handoverPending the previous instance released the lease during the call
   * @param again another trigger came during the call
   * @param socketGone the plugin's socket file is not the one registered any more
   * @param kubeletChanged (checked only after a trigger) kubelet.sock is another file now
   * @return the next step
   */
  static AfterRegister afterRegister(
      boolean handoverPending, boolean again, boolean socketGone, boolean kubeletChanged) {
    if (handoverPending) {
      // The kubelet may take the previous instance's connection's end after this registration.
      return AfterRegister.AGAIN_FOR_HANDOVER;
    }
    if ((again || socketGone) && (socketGone || kubeletChanged)) {
      return AfterRegister.LOST_AGAIN;
    }
    return AfterRegister.DONE;
  }

  private void failed(DevicePluginException error, boolean isError) {
    ctx.failed(error, isError);
    if (again) {
      again = false;
      attempt("event during the failed attempt");
      return;
    }
    RegistrationContext.cancel(retry);
    retry =
        ctx.schedule(
            () -> {
              retry = null;
              register("retry");
            },
            ctx.backoff.next());
  }

  // -------------------------------------------------------------------------------- triggers

  @Override
  public void lost(String reason) {
    ctx.markLost(reason, null);
  }

  @Override
  public void kubeletSocketCreated() {
    if (registeredWith(
        ctx.registered(), SocketFiles.identity(ctx.kubeletSocket), registeredKubelet)) {
      return; // we registered with this very kubelet.sock already
    }
    register("kubelet.sock created");
  }

  /**
   * Whether the plugin is registered with the kubelet whose socket is there now.
   *
   * @param registered registered, as far as the plugin knows
   * @param kubelet kubelet.sock now, or null
   * @param registeredWith kubelet.sock at the last registration
   * @return true when there is nothing to register
   */
  static boolean registeredWith(
      boolean registered, SocketFiles.Identity kubelet, SocketFiles.Identity registeredWith) {
    return registered && kubelet != null && Objects.equals(kubelet, registeredWith);
  }

  @Override
  public void safetyCheck() {
    owner.prune();
    if (replaced) {
      checkNewerInstance(); // still there? (a newer one is found by its file event)
      if (replaced) {
        return; // the newer instance is the kubelet's endpoint
      }
    }
    if (socketGoneOnCheck()) {
      return;
    }
    SocketFiles.Identity kubelet = SocketFiles.identity(ctx.kubeletSocket);
    // A retry after a failure to serve waits for nothing once the plugin directory is there again
    // (moved away and back between two wake-ups of the watcher, say: nothing announced it).
    boolean retryPending =
        retry != null && !(servingFailed && Files.isDirectory(ctx.config.pluginDir()));
    switch (check(ctx.registered(), inFlight, retryPending, kubelet, registeredKubelet)) {
      case KUBELET_GONE -> lost(ctx.kubeletSocket + " is gone");
      case KUBELET_CHANGED -> {
        LOG.info("{}: {} changed without a file event; registering again", name, ctx.kubeletSocket);
        register("safety check: kubelet.sock changed");
      }
      case NOT_REGISTERED -> register("safety check: not registered");
      case NOTHING -> {}
    }
  }

  /**
   * What a safety check finds, once the plugin's own socket is known to be fine.
   *
   * @param registered registered, as far as the plugin knows
   * @param inFlight a Register call is under way
   * @param retryPending a retry is scheduled and worth waiting for
   * @param kubelet kubelet.sock now, or null
   * @param registeredWith kubelet.sock at the last registration
   * @return what to do
   */
  static Check check(
      boolean registered,
      boolean inFlight,
      boolean retryPending,
      SocketFiles.Identity kubelet,
      SocketFiles.Identity registeredWith) {
    if (registered && kubelet == null) {
      return Check.KUBELET_GONE;
    }
    if (registered && !inFlight && !Objects.equals(kubelet, registeredWith)) {
      return Check.KUBELET_CHANGED;
    }
    if (!registered && !inFlight && !retryPending) {
      return Check.NOT_REGISTERED;
    }
    return Check.NOTHING;
  }

  @Override
  public void streamsMissing() {
    if (inFlight) {
      return;
    }
    LOG.warn(
        "{}: the kubelet has no device stream open ({} ms after it closed or after"
            + " registering); registering again",
        name,
        ctx.config.streamGrace().toMillis());
    lost("the kubelet has no device stream open");
    register("device stream closed");
  }

  @Override
  public void close() {
    RegistrationContext.cancel(retry);
    retry = null;
    legacy.cancel();
    owner.close();
    // A newer instance waiting for the lease registers again as soon as it is released, which
    // must come after this instance's connections to the kubelet are closed: right after them.
    Lease l = lease;
    if (l != null) {
      l.close();
    }
  }
}
