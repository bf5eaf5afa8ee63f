package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The kubelet's device manager without sockets: per resource the current endpoint, the clients (one
 * per name up to v1.36, one per socket from v1.37, see {@link KubeletProfile}), every connection
 * still held, the device list, the grace period, and what a kubelet restart leaves (the
 * checkpoint). It is driven by events (a plugin registered, a list arrived, a stream ended, a
 * registry socket vanished, the kubelet restarted) and talks to plugins only through {@link
 * Connection}; time comes from the {@link EventJournal}'s clock and the grace timer from {@link
 * Timers}, so tests run it on a fake clock.
 *
 * <p>Thread-safe: state is guarded by {@link #lock}, the journal's lock (so a step and its events
 * are atomic for observers); {@link Connection} methods are called under it. Every state change is
 * recorded in the journal, or at least wakes its waiters, while the lock is held.
 */
final class DeviceManagerModel {
  /** The device manager's hold on one plugin connection; the gRPC side implements it. */
  interface Connection {
    /** Opens a {@code ListAndWatch} stream whose callbacks carry {@code generation}. */
    void openStream(Endpoint endpoint, int generation);

    /** Cancels the open {@code ListAndWatch} stream, as a kubelet may. */
    void cancelStream();

    /** Closes the connection (the plugin sees its stream cancelled). */
    void close();
  }

  /** Runs the grace-period timers. */
  interface Timers {
    /**
     * Runs {@code task} once after {@code delay}.
     *
     * @return cancels the task
     */
    Runnable schedule(Runnable task, Duration delay);
  }

  final ReentrantLock lock;
  private final EventJournal journal;
  private final KubeletProfile profile;
  private final Duration gracePeriod;
  private final Timers timers;
  // Guarded by lock.
  private final Map<String, ResourceState> resources = new LinkedHashMap<>();
  private final List<Registration> registrations = new ArrayList<>();
  private boolean closed;

  DeviceManagerModel(
      EventJournal journal, KubeletProfile profile, Duration gracePeriod, Timers timers) {
    this.journal = journal;
    this.lock = journal.lock();
    this.profile = profile;
    this.gracePeriod = gracePeriod;
    this.timers = timers;
  }

  <T> T locked(Supplier<T> body) {
    lock.lock();
    try {
      return body.get();
    } finally {
      lock.unlock();
    }
  }

  private void locked(Runnable body) {
    lock.lock();
    try {
      body.run();
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Events in

  /**
   * A plugin answered {@code GetDevicePluginOptions}: the kubelet's registerClient and
   * PluginConnected. A new client for the name (the old connection stays open), the endpoint
   * becomes the resource's current one, the grace timer stops, {@code ListAndWatch} opens.
   *
   * @return the registration, empty when the kubelet is closed (nothing was installed)
   */
  Optional<Registration> registered(
      String resource,
      Path socket,
      String version,
      Registration.Mode mode,
      boolean preStartRequired,
      boolean preferredAllocationAvailable,
      Path registrySocket,
      Connection connection) {
    lock.lock();
    try {
      if (closed) {
        return Optional.empty();
      }
      KubeletEvent accepted =
          journal.record(
              Kind.GET_DEVICE_PLUGIN_OPTIONS,
              resource,
              Outcome.OK,
              "pre_start_required="
                  + preStartRequired
                  + " get_preferred_allocation_available="
                  + preferredAllocationAvailable,
              Facts.of().endpoint(socket));
      Registration reg =
          new Registration(
              resource,
              socket.toString(),
              version,
              preStartRequired,
              preferredAllocationAvailable,
              mode,
              accepted.time(),
              accepted.seq(),
              accepted.nanos());
      Endpoint ep =
          new Endpoint(
              resource,
              socket,
              connection,
              preStartRequired,
              preferredAllocationAvailable,
              reg,
              registrySocket,
              false);
      ResourceState rs = resources.computeIfAbsent(resource, ResourceState::new);
      Endpoint old = rs.endpoint;
      if (!profile.disconnectsTheEndedClient()) {
        rs.clients.clear();
      }
      rs.clients.add(ep);
      rs.open.removeIf(e -> e.dead || (e.connectionClosed && !e.streamOpen));
      rs.open.add(ep);
      rs.endpoint = ep;
      cancelRemoval(rs);
      if (old != null && old.connection != null && !old.connectionClosed && !old.dead) {
        journal.record(
            Kind.REGISTER,
            resource,
            Outcome.INFO,
            "a new client for "
                + resource
                + " supersedes the one on "
                + old.socket
                + "; like the kubelet, the old connection stays open and its lists still count",
            Facts.of().endpoint(old.socket));
      }
      registrations.add(reg);
      openStreamLocked(ep);
      sampleHealthLocked(rs, "registered " + socket);
      return Optional.of(reg);
    } finally {
      lock.unlock();
    }
  }

  private void openStreamLocked(Endpoint ep) {
    int gen = ++ep.generation;
    ep.streamOpen = true;
    ep.connection.openStream(ep, gen);
  }

  /**
   * A {@code ListAndWatch} message: the kubelet's genericDeviceUpdateCallback, keyed by resource
   * name only, so a list from any client, also a superseded one, replaces the resource's devices
   * (and may make them healthy again while the endpoint stays stopped).
   */
  void listReceived(Endpoint ep, int generation, List<DeviceState> list, long bytes) {
    lock.lock();
    try {
      ResourceState rs = resources.get(ep.resource);
      if (ep.generation != generation || ep.dead || rs == null) {
        return;
      }
      int healthy = (int) list.stream().filter(DeviceState::healthy).count();
      rs.devices = Collections.unmodifiableList(new ArrayList<>(list));
      rs.listed = true;
      rs.largestListBytes = Math.max(rs.largestListBytes, bytes);
      boolean current = rs.endpoint == ep;
      journal.record(
          Kind.LIST_AND_WATCH,
          ep.resource,
          Outcome.OK,
          list.size()
              + " devices, "
              + healthy
              + " healthy ("
              + bytes
              + " bytes)"
              + (current ? "" : " from the superseded client on " + ep.socket),
          Facts.of().devices(list.size()).healthy(healthy).bytes(bytes).endpoint(ep.socket));
      sampleHealthLocked(rs, "device list from " + ep.socket);
    } finally {
      lock.unlock();
    }
  }

  /**
   * A {@code ListAndWatch} stream ended.
   *
   * @param failure the status as text; null when the plugin completed the stream
   * @param tooLarge the failure is a message over the kubelet's 4 MiB limit
   */
  void streamEnded(Endpoint ep, int generation, String failure, boolean tooLarge) {
    lock.lock();
    try {
      if (ep.generation != generation || ep.dead) {
        return;
      }
      ep.streamOpen = false;
      String reason;
      Outcome outcome = Outcome.FAILED;
      String detail;
      if (ep.connectionClosed) {
        reason = "the stream ended: the kubelet had closed the connection to " + ep.socket;
        outcome = Outcome.INFO;
        detail = reason;
      } else if (failure == null) {
        reason = "the plugin ended the ListAndWatch stream on " + ep.socket;
        detail = reason;
      } else if (tooLarge) {
        reason = "device list over the kubelet's 4 MiB limit";
        detail =
            "a device list exceeds the kubelet's 4 MiB message limit ("
                + failure
                + "); on a node the resource breaks the same way (kubernetes#109304)";
      } else {
        reason = "ListAndWatch on " + ep.socket + " failed: " + failure;
        detail = reason;
      }
      journal.record(
          Kind.LIST_AND_WATCH, ep.resource, outcome, detail, Facts.of().endpoint(ep.socket));
      clientRunEndedLocked(ep, reason);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Cancels the resource's current stream and opens a new one on the same connection.
   *
   * @throws IllegalStateException when no plugin is connected for it
   */
  void cancelStream(String resource) {
    lock.lock();
    try {
      Endpoint ep = connectedEndpoint(resource);
      ep.generation++;
      journal.record(
          Kind.LIST_AND_WATCH_CANCELLED,
          resource,
          Outcome.INFO,
          "the kubelet cancelled the stream and opens a new one",
          Facts.of().endpoint(ep.socket));
      ep.connection.cancelStream();
      openStreamLocked(ep);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The connection to the current plugin breaks: the stream end as the kubelet sees it.
   *
   * @throws IllegalStateException when no plugin is connected for it
   */
  void dropConnection(String resource) {
    lock.lock();
    try {
      Endpoint ep = connectedEndpoint(resource);
      ep.generation++;
      ep.streamOpen = false;
      String reason = "connection to " + ep.socket + " dropped (dropConnection)";
      journal.record(
          Kind.LIST_AND_WATCH, resource, Outcome.FAILED, reason, Facts.of().endpoint(ep.socket));
      clientRunEndedLocked(ep, reason);
      closeConnectionLocked(ep);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The kubelet's DeRegisterPlugin for a registry socket that vanished: disconnects a client (the
   * one on that plugin's endpoint from v1.37, the newest one of the name before) and calls
   * PluginDisconnected. The event and the disconnect are one step for an observer.
   */
  void deregisterPlugin(String resource, Path registrySocket) {
    lock.lock();
    try {
      journal.record(
          Kind.DEREGISTER, resource, Outcome.INFO, "registry socket removed: " + registrySocket);
      String reason = "deregistered (registry socket " + registrySocket + " removed)";
      ResourceState rs = resources.get(resource);
      if (rs == null) {
        return;
      }
      Endpoint c = null;
      if (profile.disconnectsTheEndedClient()) {
        Path endpoint = null;
        for (Endpoint ep : rs.open) {
          if (registrySocket.equals(ep.registrySocket)) {
            endpoint = ep.socket;
          }
        }
        c = clientOn(rs, endpoint);
      } else if (!rs.clients.isEmpty()) {
        c = rs.clients.get(rs.clients.size() - 1);
      }
      if (c != null) {
        disconnectClientLocked(rs, c, reason);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Undoes the connections a registration from this registry socket made, abandoned by a restart.
   */
  void abandon(String resource, Path registrySocket, String reason) {
    lock.lock();
    try {
      ResourceState rs = resources.get(resource);
      if (rs == null) {
        return;
      }
      for (Endpoint ep : List.copyOf(rs.open)) {
        if (registrySocket.equals(ep.registrySocket) && !ep.dead) {
          killLocked(rs, ep);
          rs.clients.remove(ep);
          if (rs.endpoint == ep) {
            pluginDisconnectedLocked(rs, ep, reason);
          }
        }
      }
      journal.touch();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The kubelet process restarted: every connection is gone; from its checkpoint the new process
   * knows each resource with no devices (capacity 0) and a stopped endpoint without options until
   * the plugin registers again.
   */
  void kubeletRestarted() {
    lock.lock();
    try {
      for (ResourceState rs : resources.values()) {
        for (Endpoint ep : List.copyOf(rs.open)) {
          killLocked(rs, ep);
        }
        rs.clients.clear();
        if (rs.endpoint != null && !rs.endpoint.stopped) {
          pluginDisconnectedLocked(rs, rs.endpoint, "kubelet restarted");
        }
        rs.devices = List.of();
        Endpoint checkpoint = Endpoint.fromCheckpoint(rs.name, rs.endpoint);
        rs.endpoint = checkpoint;
        // The new process's stopped endpoint: removed once the grace period has passed since
        // its start, unless the plugin registers again (the kubelet drops it at the next
        // capacity update after that).
        cancelRemoval(rs);
        if (!closed) {
          rs.removal = timers.schedule(() -> removeAfterGrace(rs, checkpoint), gracePeriod);
        }
        sampleHealthLocked(rs, "kubelet restarted: resource known from its checkpoint only");
      }
      journal.touch();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The kubelet begins to stop: from now on nothing is installed and no grace timer starts.
   *
   * @return false when it was closed already
   */
  boolean beginClose() {
    lock.lock();
    try {
      if (closed) {
        return false;
      }
      closed = true;
      journal.touch();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** The kubelet stopped: timers cancelled, every connection closed, every endpoint stopped. */
  void closeAll() {
    lock.lock();
    try {
      closed = true;
      for (ResourceState rs : resources.values()) {
        cancelRemoval(rs);
        for (Endpoint ep : List.copyOf(rs.open)) {
          killLocked(rs, ep);
        }
        if (rs.endpoint != null) {
          rs.endpoint.stopped = true;
        }
      }
      journal.touch();
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The kubelet's client bookkeeping

  /**
   * The kubelet's runClient after a client's ListAndWatch returned: looks a client up and
   * disconnects it. Up to v1.36 the lookup is by resource name (the newest client, whichever stream
   * ended); from v1.37 by resource name and socket path.
   */
  private void clientRunEndedLocked(Endpoint ended, String reason) {
    ResourceState rs = resources.get(ended.resource);
    if (rs == null) {
      return;
    }
    Endpoint c;
    if (profile.disconnectsTheEndedClient()) {
      c = clientOn(rs, ended.socket);
    } else {
      c = rs.clients.isEmpty() ? null : rs.clients.get(rs.clients.size() - 1);
    }
    if (c != null) {
      disconnectClientLocked(rs, c, reason);
    }
  }

  private static Endpoint clientOn(ResourceState rs, Path socket) {
    for (Endpoint x : rs.clients) {
      if (x.socket.equals(socket)) {
        return x;
      }
    }
    return null;
  }

  /**
   * The kubelet's disconnectClient: forgets the client, closes its connection, and calls
   * PluginDisconnected for the resource.
   */
  private void disconnectClientLocked(ResourceState rs, Endpoint c, String reason) {
    if (profile.disconnectsTheEndedClient()) {
      rs.clients.remove(c);
    } else {
      rs.clients.clear();
    }
    closeConnectionLocked(c);
    pluginDisconnectedLocked(rs, c, reason);
  }

  private static void closeConnectionLocked(Endpoint c) {
    if (c.connectionClosed || c.connection == null) {
      return;
    }
    c.connectionClosed = true;
    c.connection.close();
  }

  /** The kubelet process is gone: the connection closes and nothing it started goes on. */
  private static void killLocked(ResourceState rs, Endpoint ep) {
    ep.dead = true;
    ep.streamOpen = false;
    rs.open.remove(ep);
    if (ep.connection != null) {
      ep.connectionClosed = true;
      ep.connection.close();
    }
  }

  /**
   * The kubelet's PluginDisconnected: the resource's healthy devices move to unhealthy (allocatable
   * 0, capacity stays) and the CURRENT endpoint gets a stop time (Allocate fails until the next
   * registration); the resource is removed after the grace period.
   */
  private void pluginDisconnectedLocked(ResourceState rs, Endpoint client, String reason) {
    Endpoint current = rs.endpoint;
    if (current == null) {
      return;
    }
    List<DeviceState> unhealthy = new ArrayList<>(rs.devices.size());
    for (DeviceState d : rs.devices) {
      unhealthy.add(new DeviceState(d.id(), DeviceState.UNHEALTHY, d.numaNodes()));
    }
    rs.devices = Collections.unmodifiableList(unhealthy);
    current.stopped = true;
    journal.record(
        Kind.DISCONNECT,
        rs.name,
        Outcome.INFO,
        reason
            + "; "
            + unhealthy.size()
            + " devices marked unhealthy; endpoint "
            + current.socket
            + " stopped"
            + (client == current ? "" : " (the disconnected client was " + client.socket + ")")
            + "; removed in "
            + gracePeriod
            + " unless the plugin registers again",
        Facts.of().endpoint(client.socket).devices(unhealthy.size()).allocatable(0));
    sampleHealthLocked(rs, reason);
    // After the event: the grace period runs from the disconnection the journal shows, so the
    // removal is never recorded less than the grace period after it.
    cancelRemoval(rs);
    if (!closed) {
      rs.removal = timers.schedule(() -> removeAfterGrace(rs, current), gracePeriod);
    }
  }

  private static void cancelRemoval(ResourceState rs) {
    if (rs.removal != null) {
      rs.removal.run();
      rs.removal = null;
    }
  }

  private void removeAfterGrace(ResourceState rs, Endpoint ep) {
    locked(
        () -> {
          if (closed || resources.get(rs.name) != rs || rs.endpoint != ep || !ep.stopped) {
            return;
          }
          resources.remove(rs.name);
          journal.forgetHealth(rs.name);
          journal.record(
              Kind.RESOURCE_REMOVED,
              rs.name,
              Outcome.INFO,
              "no registration within the grace period of " + gracePeriod);
        });
  }

  private void sampleHealthLocked(ResourceState rs, String cause) {
    journal.sampleHealth(
        rs.name,
        rs.allocatable(),
        rs.capacity(),
        rs.endpoint == null || rs.endpoint.stopped,
        rs.endpoint == null ? "" : rs.endpoint.socket.toString(),
        cause);
  }

  // ---------------------------------------------------------------------------------------------
  // Queries

  boolean isClosed() {
    return locked(() -> closed);
  }

  /**
   * @throws IllegalStateException when the kubelet is closed
   */
  void checkOpen() {
    if (isClosed()) {
      throw new IllegalStateException("the fake kubelet is closed");
    }
  }

  /** The resource's state for a reader holding {@link #lock}; null when unknown. */
  ResourceState resource(String name) {
    return resources.get(name);
  }

  /** Every known resource's state, for a reader holding {@link #lock}. */
  Iterable<ResourceState> resourceStates() {
    return resources.values();
  }

  List<String> resources() {
    return locked(() -> List.copyOf(resources.keySet()));
  }

  List<DeviceState> devices(String resource) {
    return locked(
        () -> {
          ResourceState rs = resources.get(resource);
          return rs == null ? List.of() : rs.devices;
        });
  }

  long largestListBytes(String resource) {
    return locked(
        () -> {
          ResourceState rs = resources.get(resource);
          return rs == null ? 0L : rs.largestListBytes;
        });
  }

  List<Registration> registrations() {
    return locked(() -> List.copyOf(registrations));
  }

  /** Resources with at least one open stream, current or superseded. */
  List<String> connectedResources() {
    return locked(
        () -> {
          List<String> out = new ArrayList<>();
          for (ResourceState rs : resources.values()) {
            for (Endpoint ep : rs.open) {
              if (ep.streamOpen && !ep.connectionClosed && !ep.dead) {
                out.add(rs.name);
                break;
              }
            }
          }
          return out;
        });
  }

  /** The current endpoint of a resource unless it is stopped. */
  Optional<Endpoint> liveEndpoint(String resource) {
    return locked(
        () -> {
          ResourceState rs = resources.get(resource);
          if (rs == null || rs.endpoint == null || rs.endpoint.stopped) {
            return Optional.empty();
          }
          return Optional.of(rs.endpoint);
        });
  }

  private Endpoint connectedEndpoint(String resource) {
    checkOpen();
    return liveEndpoint(resource)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no plugin is connected for "
                        + resource
                        + "; connected: "
                        + connectedResources()
                        + ". Await its registration first."));
  }
}
