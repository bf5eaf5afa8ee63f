package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Objects;
import java.util.concurrent.CompletionException;

/**
 * Legacy registration: the plugin serves its socket in the device plugin directory and calls {@code
 * Register} on {@code kubelet.sock} (see {@link LegacyRegister}), again on every sign of a kubelet
 * restart (its socket deleted, {@code kubelet.sock} created or changed, no device stream), retrying
 * failures with capped exponential backoff, forever. In a handover, a newer instance registers its
 * own socket, and again once the old one has released the lease.
 */
public final class LegacyRegistration extends SocketRegistration {

  /** What a safety check finds. */
  enum Check {
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
    DONE,
    /** The previous instance went away during the call: register once more. */
    AGAIN_FOR_HANDOVER,
    /** What the kubelet accepted is gone already: lost, register again. */
    LOST_AGAIN
  }

  private final LegacyRegister legacy;

  // Touched only on the control executor (or before start / after close).
  private SocketFiles.Identity registeredKubelet;
  private boolean inFlight;
  private boolean again;
  // The last attempt failed to serve the socket (its directory gone, say), not to register.
  private boolean servingFailed;
  private boolean handoverPending;

  /** Whether this trigger's attempt was already repeated because the kubelet was starting. */
  private boolean retriedAsKubeletStarted;

  public LegacyRegistration(RegistrationContext ctx) {
    super(ctx, ctx.config.pluginDir(), "legacy", " and registering it", " and registers it");
    this.owner =
        new SocketOwner(
            dir.resolve(EngineConfig.socketName(name)), ctx.shared, ctx.devicePluginServices);
    this.legacy = new LegacyRegister(name, ctx.shared, ctx.kubeletSocket);
  }

  @Override
  public RegistrationMode mode() {
    return RegistrationMode.LEGACY;
  }

  /**
   * AUTO mode: the plugin watcher ignored the resource; this strategy takes over from it: takes the
   * lease (or waits for it) and registers at once. On the control executor.
   */
  public void takeOver(String reason) {
    try {
      if (!takeLease()) {
        awaitHandover();
      }
    } catch (IOException e) {
      LOG.warn("{}: cannot open the serving lease: {}", name, Loggers.describe(e));
    }
    ctx.backoff.reset();
    register(reason);
  }

  // -------------------------------------------------------------------------------- handover

  @Override
  void leaseAcquired() {
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
  void newerInstanceGone() {
    ctx.backoff.reset();
    register("newer instance gone");
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
        LOG.debug("{}: cannot serve again during a registration: {}", name, Loggers.describe(e));
      }
      return;
    }
    cancelPending();
    retriedAsKubeletStarted = false;
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
      DevicePluginException error = e instanceof DevicePluginException d ? d : cannotServe(e);
      ctx.attempted(
          RegistrationMode.LEGACY, legacy.lastOffered(), false, error.getMessage(), start);
      failed(error, true);
      return;
    }
    SocketFiles.Identity kubelet = SocketFiles.identity(ctx.kubeletSocket);
    if (kubelet == null) {
      waitForKubelet(
          " does not exist (kubelet not running, or the device plugin directory is not mounted)");
      return;
    }
    inFlight = true;
    legacy
        .register(ownName(), ctx.requests, ctx.control)
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
                waitForKubelet(" does not accept connections (kubelet stopped or restarting)");
              } else if (e instanceof LegacyRegister.Unreachable && !retriedAsKubeletStarted) {
                // Refused by the kubelet.sock that accepts connections now: a kubelet binds its
                // socket (the file appears, the attempt starts) a moment before it listens. Once
                // per trigger, try again at once instead of reporting an error.
                retriedAsKubeletStarted = true;
                attempt("kubelet.sock accepts connections now");
              } else {
                failed(e, true);
              }
            });
  }

  private void waitForKubelet(String why) {
    failed(new DevicePluginException("waiting for the kubelet: " + ctx.kubeletSocket + why), false);
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
        : new DevicePluginException("registration failed: " + Loggers.describe(e), e);
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
   * What follows a successful Register: {@code handoverPending}, the previous instance released the
   * lease during the call; {@code again}, another trigger came during it; {@code kubeletChanged} is
   * checked only after a trigger.
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
    cancelPending();
    pending =
        ctx.schedule(
            () -> {
              pending = null;
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

  /** Whether the plugin is registered with the kubelet whose socket ({@code kubelet}) is there. */
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
        pending != null && !(servingFailed && Files.isDirectory(ctx.config.pluginDir()));
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
   * What a safety check finds, once the plugin's own socket is known to be fine ({@code
   * retryPending}: a retry is scheduled and worth waiting for).
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
    legacy.cancel();
    super.close();
  }
}
