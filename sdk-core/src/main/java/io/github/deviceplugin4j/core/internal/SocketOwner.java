package io.github.deviceplugin4j.core.internal;

import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

  private static final Logger LOG = LoggerFactory.getLogger(SocketOwner.class);

  private final Path socket;
  private final Shared shared;
  private final List<ServerServiceDefinition> services;
  private final List<UdsServer> superseded = new ArrayList<>();
  private UdsServer server;

  SocketOwner(Path socket, Shared shared, List<ServerServiceDefinition> services) {
    this.socket = socket;
    this.shared = shared;
    this.services = services;
  }

  /** The socket path. */
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

  /** Whether a server runs and the file at the path is still its socket. */
  synchronized boolean stillOurs() {
    return server != null && server.stillOurs();
  }

  /** Whether a server was started (its file may be gone). */
  synchronized boolean started() {
    return server != null;
  }

  /**
   * Serves the socket unless the file at the path is still ours.
   *
   * @return true when a new server was started
   * @throws IOException when the socket cannot be created
   */
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
   *
   * @throws IOException when the socket cannot be created
   */
  synchronized void replace() throws IOException {
    UdsServer previous = server;
    server =
        UdsServer.start(
            socket,
            shared.config().socketPermissions(),
            services,
            shared.group(),
            previous == null ? null : previous.identity());
    if (previous != null) {
      previous.retire();
      superseded.add(previous);
      prune();
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

  /**
   * Superseded servers that still hold connections.
   *
   * @return count
   */
  synchronized int supersededCount() {
    prune();
    return superseded.size();
  }

  /** Stops every server, the superseded ones too, and removes the socket file if it is ours. */
  synchronized void close() {
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
    for (UdsServer old : superseded) {
      old.close(500);
    }
    superseded.clear();
  }
}
