package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;

/**
 * How one resource registers with the kubelet: the mode's own state and its decisions on every
 * trigger. {@link LegacyRegistration} calls {@code Register} on {@code kubelet.sock}; {@link
 * WatcherRegistration} leaves the kubelet's plugin watcher to find the socket, and in AUTO mode
 * falls back to legacy registration (the resource then changes its strategy).
 *
 * <p>The triggers run on the resource's control executor, one at a time; {@link #start()} runs on
 * the caller's thread before any of them. {@link #mode()}, {@link #socket()} and {@link
 * #replaced()} may be read from any thread.
 *
 * <p>Each serves the resource on one {@link SocketOwner} in one directory, and handles the handover
 * between two instances of the resource there that the {@link Lease} orders: the old one, replaced,
 * stops registering ({@link #checkNewerInstance()}); the newer one, given the lease when the old
 * one stops, registers again ({@link #leaseAcquired()}, each mode its own way).
 */
public abstract class SocketRegistration {

  static final Logger LOG = Loggers.resource();

  final RegistrationContext ctx;
  final String name;
  // The plugin directory (legacy) or the plugins registry directory (plugin watcher).
  final Path dir;
  final InstanceSockets instances;
  volatile SocketOwner owner;
  // How the log names the mode, and how an instance that takes over registers in it.
  private final String modeName;
  private final String takingOver;
  private final String newerTakesOver;

  // Touched only on the control executor (or before start / after close).
  Lease lease;
  // The next retry (legacy) or kick (plugin watcher), or null.
  ScheduledFuture<?> pending;
  private String newerInstance;
  volatile boolean replaced;
  // Closed; for a plugin watcher that AUTO mode left for legacy registration, ctx is not.
  volatile boolean stopped;

  SocketRegistration(
      RegistrationContext ctx,
      Path dir,
      String modeName,
      String takingOver,
      String newerTakesOver) {
    this.ctx = ctx;
    this.name = ctx.name;
    this.dir = dir;
    this.instances = new InstanceSockets(dir, EngineConfig.socketName(name));
    this.modeName = modeName;
    this.takingOver = takingOver;
    this.newerTakesOver = newerTakesOver;
  }

  /** The mode in use: LEGACY or PLUGIN_WATCHER. */
  public abstract RegistrationMode mode();

  /** Registers now, or right after the attempt in flight; the reason is for the log. */
  public abstract void register(String reason);

  /** The registration is lost (an outage starts); the reason is for the log. */
  public abstract void lost(String reason);

  /** {@code kubelet.sock} was created. */
  public abstract void kubeletSocketCreated();

  /** Safety net for missed file events: checks the socket files and the registration. */
  public abstract void safetyCheck();

  /** The kubelet has had no ListAndWatch stream open for the whole grace period. */
  public abstract void streamsMissing();

  /** The socket the DevicePlugin service is served on now. */
  public Path socket() {
    return owner.socket();
  }

  /** Whether the socket file is still the one this strategy serves. */
  public boolean serving() {
    return owner.stillOurs();
  }

  /** Whether a newer instance of the resource took over: this one no longer registers. */
  public boolean replaced() {
    return replaced;
  }

  /** Serves the socket, on the caller's thread, so that its failure reaches the host's start. */
  public void start() throws IOException {
    boolean successor = !takeLease();
    owner.replace();
    LOG.info("Serving {} on {} ({} mode)", name, owner.socket(), modeName);
    if (successor) {
      awaitHandover();
    }
  }

  String ownName() {
    return owner.socket().getFileName().toString();
  }

  DevicePluginException cannotServe(Exception e) {
    return new DevicePluginException(
        "cannot serve " + name + " on " + owner.socket() + ": " + Loggers.describe(e), e);
  }

  void cancelPending() {
    if (pending != null) {
      pending.cancel(false);
      pending = null;
    }
  }

  // -------------------------------------------------------------------------------- handover

  /**
   * Takes the serving lease, or, when another instance of this resource holds it (a rolling update
   * with surge), prepares a socket name of this instance's own; true when this one holds it.
   */
  boolean takeLease() throws IOException {
    lease = Lease.open(dir, EngineConfig.socketName(name));
    if (lease.tryAcquire()) {
      return true;
    }
    String own = instances.newInstanceName();
    owner = owner.at(dir.resolve(own));
    LOG.info(
        "{}: another instance holds the lease {}; taking over: serving {}{} (the newest"
            + " registration wins at the kubelet)",
        name,
        lease.path(),
        own,
        takingOver);
    return false;
  }

  void awaitHandover() {
    lease.acquireLater(name, () -> ctx.control.execute(this::leaseAcquired));
  }

  /** The previous instance is gone (it released the lease, or died): register again at once. */
  abstract void leaseAcquired();

  /** A file was created in the directory (perhaps a newer instance's socket). */
  public void pluginDirFileCreated(String fileName) {
    if (instances.isOtherInstance(fileName, ownName())) {
      checkNewerInstance();
    }
  }

  /** Events may have been missed in the directory: look for a newer instance. */
  public void rescanInstances() {
    checkNewerInstance();
  }

  /**
   * The lease holder is replaced while a newer instance of the resource serves a socket of its own:
   * it stops registering (the newer one is the kubelet's endpoint) but keeps its connections open
   * until it stops, since closing them would take the resource offline at the kubelet.
   */
  void checkNewerInstance() {
    if (lease == null || !lease.held() || stopped) {
      return;
    }
    String newer = instances.liveOther(ownName());
    if (newer != null && !replaced) {
      replaced = true;
      newerInstance = newer;
      ctx.unregistered();
      cancelPending();
      LOG.info(
          "{}: a newer instance serves {}{}; this one stops registering and keeps its connections"
              + " open until it is stopped (SIGTERM), then hands over",
          name,
          newer,
          newerTakesOver);
    } else if (newer == null && replaced) {
      replaced = false;
      LOG.warn(
          "{}: the newer instance ({}) is gone while this one still runs; registering again",
          name,
          newerInstance);
      newerInstance = null;
      newerInstanceGone();
    }
  }

  /** The newer instance that replaced this one is gone: this one registers again. */
  abstract void newerInstanceGone();

  // ---------------------------------------------------------------------------- registration

  /**
   * Serves the socket again if its file is gone. The superseded server keeps the kubelet's
   * connections: ending one of their streams would take the resource offline at the kubelet.
   */
  void ensureServing() throws IOException {
    if (owner.ensureServing()) {
      LOG.info("Serving {} again on {}", name, owner.socket());
    }
  }

  /**
   * Safety check: when the socket file is not ours any more, the registration is lost and the
   * socket is served and registered again; true when the socket was gone.
   */
  boolean socketGoneOnCheck() {
    if (owner.stillOurs()) {
      return false;
    }
    if (ctx.registered()) {
      LOG.warn("{}: socket {} vanished without a file event; serving it again", name, socket());
    }
    lost("its socket " + owner.socket() + " is gone");
    register("safety check: socket gone");
    return true;
  }

  /** Stops registering and closes every socket (the superseded ones too) and the lease. */
  public void close() {
    stopped = true;
    cancelPending();
    owner.close();
    // A newer instance waiting for the lease registers again as soon as it is released, which
    // must come after this instance's connections to the kubelet are closed: right after them.
    Lease l = lease;
    if (l != null) {
      l.close();
    }
  }
}
