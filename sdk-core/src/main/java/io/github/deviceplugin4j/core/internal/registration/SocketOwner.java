package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.transport.UdsServer;
import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The socket of one resource: the server on it, serving it again when its file is gone, and the
 * superseded servers whose connections the kubelet still holds.
 *
 * <p>A superseded server stops accepting but keeps its open connections (see {@link
 * UdsServer#retire()}): the kubelet takes the whole resource offline when any of its ListAndWatch
 * streams ends, so the SDK never ends one while the kubelet runs. What bounds them is the kubelet:
 * it closes every connection when it restarts, and a server whose last connection is gone
 * terminates and is forgotten here ({@link #prune()}).
 *
 * <p>Not thread-safe: used on the resource's control executor, except {@link #close()}.
 */
final class SocketOwner {

  private static final Logger LOG = Loggers.named("SocketOwner");

  /**
   * How long after serving again the previous listener is stopped and the next standby bound. Both
   * use the event loop and a core; right after a kubelet restart those carry the Register, the
   * kubelet's dial-back and the first device list (about 5-8 ms with the image's flags), which were
   * measured 0.3-0.4 ms slower at p50 when this work ran at once. A kubelet is down for seconds
   * between restarts, so the standby is back long before it is needed.
   */
  static final long AFTER_REPLACE_DELAY_MILLIS = 100;

  private final Path socket;
  private final Shared shared;
  private final List<ServerServiceDefinition> services;
  private final List<UdsServer> superseded = new ArrayList<>();
  private UdsServer server;

  /** A server bound and ready to replace ours at once; prepared in the background. */
  private UdsServer.Standby standby;

  private boolean standbyPreparing;
  private boolean closed;

  SocketOwner(Path socket, Shared shared, List<ServerServiceDefinition> services) {
    this.socket = socket;
    this.shared = shared;
    this.services = services;
  }

  Path socket() {
    return socket;
  }

  /**
   * An owner of another socket path serving the same services, nothing served yet: a second
   * instance of a resource takes its own socket name this way.
   */
  SocketOwner at(Path other) {
    return new SocketOwner(other, shared, services);
  }

  /**
   * An owner of another socket path that takes this one's servers over as superseded: ours stops
   * accepting and its file is removed, but every open connection stays (the kubelet takes the
   * resource offline when one of its streams ends). This owner is done afterwards. The new path is
   * not served yet: call {@link #replace()} on the result.
   */
  synchronized SocketOwner moveTo(Path other) {
    SocketOwner next = new SocketOwner(other, shared, services);
    closed = true;
    if (standby != null) {
      standby.discard();
      standby = null;
    }
    if (server != null) {
      server.removeFileIfOurs();
      server.retire();
      next.superseded.add(server);
      server = null;
    }
    next.superseded.addAll(superseded);
    superseded.clear();
    return next;
  }

  /** Whether a server runs and the file at the path is still its socket. */
  synchronized boolean stillOurs() {
    return server != null && server.stillOurs();
  }

  /** Serves the socket unless the file at the path is still ours; true when a server started. */
  synchronized boolean ensureServing() throws IOException {
    if (stillOurs()) {
      return false;
    }
    replace();
    return true;
  }

  /**
   * Serves a new socket at the path, replacing ours (the plugin watcher sees a new file); the
   * previous server keeps its connections.
   */
  synchronized void replace() throws IOException {
    UdsServer previous = server;
    UdsServer.Standby ready = standby;
    standby = null;
    if (previous != null && ready != null && ready.usable()) {
      // Serving again (kubelet restart, socket deleted): the standby is placed by a rename.
      server = ready.place(socket, previous.identity());
    } else {
      if (ready != null) {
        ready.discard();
      }
      server =
          UdsServer.start(
              socket,
              shared.config().socketPermissions(),
              services,
              shared.group(),
              previous == null ? null : previous.identity());
    }
    if (previous != null) {
      superseded.add(previous);
    }
    // Off the way to the Register that follows, and after it (AFTER_REPLACE_DELAY_MILLIS):
    // stopping the previous server's listener took 0.3-3 ms (measured), and binding the next
    // standby is the worker pool's, which may first start a thread. The previous listener's path
    // is already this server's, so nobody can reach it meanwhile; close() stops it in any case.
    // The timer's thread always runs.
    try {
      shared
          .timer()
          .schedule(
              () -> afterReplace(previous), AFTER_REPLACE_DELAY_MILLIS, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      afterReplace(previous); // shutting down
    }
  }

  private void afterReplace(UdsServer previous) {
    if (previous != null) {
      previous.retire();
    }
    synchronized (this) {
      prune();
      prepareStandby();
    }
  }

  /**
   * Binds the next server in the background, so that the next time the socket must be served again
   * (its file deleted by a restarting kubelet, just before kubelet.sock returns) costs a rename,
   * not a server start, on the way to the Register.
   */
  private void prepareStandby() {
    if (closed || standby != null || standbyPreparing) {
      return;
    }
    standbyPreparing = true;
    try {
      shared.workers().execute(this::bindStandby);
    } catch (RejectedExecutionException e) {
      standbyPreparing = false; // shutting down
    }
  }

  private void bindStandby() {
    UdsServer.Standby bound = null;
    try {
      bound =
          UdsServer.bind(
              socket.getParent(), shared.config().socketPermissions(), services, shared.group());
    } catch (IOException | RuntimeException e) {
      LOG.debug("{}: no standby server: {}", socket, e.toString());
    }
    synchronized (this) {
      standbyPreparing = false;
      if (bound != null && (closed || standby != null)) {
        bound.discard();
      } else if (bound != null) {
        standby = bound;
      }
    }
  }

  /** Forgets superseded servers whose connections are all gone. */
  synchronized void prune() {
    superseded.removeIf(UdsServer::isTerminated);
    if (superseded.size() > 1) {
      LOG.debug(
          "{}: {} superseded servers still hold connections of the kubelet",
          socket,
          superseded.size());
    }
  }

  /** Stops every server, the superseded ones too, and removes the socket file if it is ours. */
  synchronized void close() {
    closed = true;
    if (standby != null) {
      standby.discard();
      standby = null;
    }
    // Every connection is cut at once, then each server is awaited: the kubelet sees them end
    // together, and the caller releases the lease only once all of them are gone.
    if (server != null) {
      server.shutdownNow();
    }
    superseded.forEach(UdsServer::shutdownNow);
    if (server != null) {
      server.close(2000);
      server = null;
    }
    superseded.forEach(old -> old.close(500));
    superseded.clear();
  }
}
