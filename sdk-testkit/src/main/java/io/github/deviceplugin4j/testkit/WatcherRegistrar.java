package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.PluginConnector.ConnectException;
import io.github.deviceplugin4j.testkit.internal.ResourceNames;
import io.github.deviceplugin4j.testkit.internal.SocketFiles;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The kubelet's plugin-watcher registration of device plugins (the plugin manager's operation
 * generator plus the device manager's handler): {@code GetInfo}, validation, connection, {@code
 * NotifyRegistrationStatus}; deregistration when a registry socket vanishes. It owns which registry
 * sockets are registered or being registered; the connection itself is made by the {@link
 * PluginConnector} and kept in the {@link DeviceManagerModel}. Its state is guarded by the model's
 * (the journal's) lock.
 */
final class WatcherRegistrar {
  private final UdsTransport transport;
  private final List<String> supportedVersions;
  private final PluginConnector connector;
  private final DeviceManagerModel model;
  private final EventJournal journal;
  private final DraPluginManager dra;
  private final ReentrantLock lock;
  // Guarded by lock.
  private final Map<Path, String> watcherPlugins = new LinkedHashMap<>();
  // The file identity (inode) of each registered socket: the reconciler's timestamp stand-in.
  private final Map<Path, Object> registeredKeys = new LinkedHashMap<>();
  private final Set<Path> watcherInFlight = new HashSet<>();
  private final Set<Path> watcherPending = new HashSet<>();
  private final Set<Path> removedWhileInFlight = new HashSet<>();
  // The registered sockets (in watcherPlugins) that belong to DRA drivers.
  private final Set<Path> draSockets = new HashSet<>();
  // Consecutive failed registrations of a socket, for the retry backoff.
  private final Map<Path, Integer> failures = new HashMap<>();
  // Incremented by a kubelet restart: a registration begun by the old kubelet must not finish.
  private long incarnation;

  /** The plugin manager's reconciler loop period ({@code loopSleepDuration}). */
  static final Duration RECONCILE_PERIOD = Duration.ofSeconds(1);

  /**
   * The first wait after a failed registration (exponentialbackoff's initialDurationBeforeRetry).
   */
  static final Duration FIRST_RETRY = Duration.ofMillis(500);

  /** The longest wait between retries (exponentialbackoff's maxDurationBeforeRetry). */
  static final Duration MAX_RETRY = Duration.ofSeconds(122);

  WatcherRegistrar(
      UdsTransport transport,
      List<String> supportedVersions,
      PluginConnector connector,
      DeviceManagerModel model,
      EventJournal journal,
      DraPluginManager dra) {
    this.transport = transport;
    this.dra = dra;
    this.supportedVersions = List.copyOf(supportedVersions);
    this.connector = connector;
    this.model = model;
    this.journal = journal;
    this.lock = model.lock;
  }

  /**
   * Forgets registered sockets (kubelet restart); a registration begun before does not finish. Call
   * before the model learns of the restart, so an attempt that connects in between is abandoned.
   */
  void clear() {
    lock.lock();
    try {
      watcherPlugins.clear();
      registeredKeys.clear();
      draSockets.clear();
      removedWhileInFlight.clear();
      failures.clear();
      incarnation++;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether the registration begun under {@code begun} may go on; records why not. A killed kubelet
   * process finishes nothing, so an attempt that spans a restart is abandoned.
   */
  private boolean stillCurrent(long begun, String name, Path socket) {
    lock.lock();
    try {
      if (begun == incarnation && !model.isClosed()) {
        return true;
      }
      journal.record(
          Kind.REGISTER,
          name,
          Outcome.INFO,
          "abandoned the registration of " + socket + ": the kubelet restarted meanwhile");
      return false;
    } finally {
      lock.unlock();
    }
  }

  private static Object fileKey(Path socket) {
    try {
      return Files.readAttributes(socket, BasicFileAttributes.class).fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  /** A socket the watcher handed over: its file and the kubelet incarnation that found it. */
  record Discovery(Object key, long begun) {}

  /** Both halves at once (a socket re-created while its registration ran). */
  void register(Path socket) {
    Discovery d = discover(socket);
    if (d != null) {
      registerDiscovered(socket, d);
    }
  }

  /**
   * The first half, on the watcher's thread, like the kubelet's desired-state cache: a socket seen
   * again unchanged is nothing new, a new file at a registered path deregisters the old plugin
   * first, and {@link Kind#PLUGIN_DISCOVERED} is recorded before the watcher goes on, so once a
   * walk is over every socket it found is in the log.
   *
   * @return what {@link #registerDiscovered} needs; null when there is nothing to register
   */
  Discovery discover(Path socket) {
    Object key = fileKey(socket);
    boolean replaced;
    lock.lock();
    try {
      if (model.isClosed()) {
        return null;
      }
      Object registeredKey = registeredKeys.get(socket);
      boolean registered = watcherPlugins.containsKey(socket) && !watcherInFlight.contains(socket);
      if (registered && key != null && key.equals(registeredKey)) {
        // The same socket seen again (a rescan): the reconciler sees nothing new.
        return null;
      }
      replaced = registered;
    } finally {
      lock.unlock();
    }
    if (replaced) {
      // A new socket file at a registered path: the kubelet's reconciler unregisters the old
      // plugin (DeRegisterPlugin, which disconnects a client) before it registers the new one.
      removed(socket);
    }
    lock.lock();
    try {
      if (model.isClosed()) {
        return null;
      }
      if (!watcherInFlight.add(socket)) {
        // Re-created while its registration runs: like the kubelet's reconciler, register the new
        // socket once the current attempt is done.
        watcherPending.add(socket);
        return null;
      }
      journal.record(Kind.PLUGIN_DISCOVERED, "", Outcome.INFO, socket.toString());
      return new Discovery(key, incarnation);
    } finally {
      lock.unlock();
    }
  }

  /** The second half, off the watcher's thread: GetInfo, validation, registration. */
  void registerDiscovered(Path socket, Discovery d) {
    boolean again;
    boolean failed = false;
    try {
      failed = registerNow(socket, d.begun(), d.key());
    } finally {
      lock.lock();
      try {
        watcherInFlight.remove(socket);
        again = watcherPending.remove(socket) && !model.isClosed();
        if (failed && !again) {
          scheduleRetry(socket, d);
        } else {
          failures.remove(socket);
        }
      } finally {
        lock.unlock();
      }
    }
    if (again && SocketFiles.isSocket(socket)) {
      register(socket);
    }
  }

  /**
   * After a registration that failed before the plugin was taken (dial, GetInfo, no handler for its
   * type, validation), the kubelet tries again: the plugin manager's reconciler ({@code
   * pkg/kubelet/pluginmanager/reconciler/reconciler.go}) calls {@code RegisterPlugin} every second
   * for a socket in the desired state that is not in the actual state, and the operation executor's
   * exponential backoff ({@code pkg/util/goroutinemap/exponentialbackoff}) holds each retry back
   * 500 ms after the first failure, twice as long after each further one, at most 2 min 2 s. A
   * plugin that missed the 1 s GetInfo deadline once (a busy node) is thus registered a second or
   * two later. Called under the lock.
   */
  private void scheduleRetry(Path socket, Discovery d) {
    if (model.isClosed() || d.begun() != incarnation) {
      return;
    }
    int n = failures.merge(socket, 1, Integer::sum);
    Duration backoff = FIRST_RETRY.multipliedBy(1L << Math.min(n - 1, 20));
    if (backoff.compareTo(MAX_RETRY) > 0) {
      backoff = MAX_RETRY;
    }
    // The next reconciler pass at or after the backoff's end.
    long period = RECONCILE_PERIOD.toMillis();
    long loops = Math.max(1, (backoff.toMillis() + period - 1) / period);
    Duration delay = RECONCILE_PERIOD.multipliedBy(loops);
    journal.record(
        Kind.REGISTER,
        "",
        Outcome.INFO,
        "will retry the registration of " + socket + " in " + delay.toMillis() + " ms");
    try {
      transport.scheduler().schedule(() -> retry(socket, d), delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The kubelet is closing: nothing is retried any more.
    }
  }

  /** A retry: the same socket file, still unregistered, under the same kubelet. */
  private void retry(Path socket, Discovery d) {
    lock.lock();
    try {
      if (model.isClosed()
          || d.begun() != incarnation
          || watcherPlugins.containsKey(socket)
          || !failures.containsKey(socket)
          || !Objects.equals(fileKey(socket), d.key())
          || !watcherInFlight.add(socket)) {
        return;
      }
    } finally {
      lock.unlock();
    }
    try {
      transport.executor().execute(() -> registerDiscovered(socket, d));
    } catch (RejectedExecutionException e) {
      lock.lock();
      try {
        watcherInFlight.remove(socket);
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * One registration attempt.
   *
   * @return whether it failed in a way the kubelet retries (before the handler took the plugin)
   */
  private boolean registerNow(Path socket, long begun, Object key) {
    ManagedChannel channel = transport.channel(socket);
    try {
      boolean ready;
      try {
        ready = transport.awaitReady(channel, FakeKubelet.DIAL_TIMEOUT);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
      if (!ready) {
        journal.record(
            Kind.REGISTER,
            "",
            Outcome.FAILED,
            "RegisterPlugin error -- dial failed at socket " + socket + ", err: timed out");
        return true;
      }
      var stub = RegistrationGrpc.newBlockingStub(channel);
      PluginInfo info;
      try {
        info =
            stub.withDeadlineAfter(FakeKubelet.GET_INFO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .getInfo(InfoRequest.getDefaultInstance());
      } catch (StatusRuntimeException e) {
        journal.record(
            Kind.GET_INFO,
            "",
            Outcome.FAILED,
            "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket "
                + socket
                + ", err: "
                + PluginConnector.describe(e.getStatus()));
        return true;
      }
      String name = info.getName();
      journal.record(
          Kind.GET_INFO,
          name,
          Outcome.OK,
          "type="
              + info.getType()
              + " name="
              + name
              + " endpoint="
              + (info.getEndpoint().isEmpty() ? "(this socket)" : info.getEndpoint())
              + " supported_versions="
              + ResourceNames.goList(info.getSupportedVersionsList()));
      if (info.getType().equals("DRAPlugin")) {
        return registerDra(stub, socket, info, begun, key);
      }
      if (info.getType().equals("CSIPlugin")) {
        journal.record(
            Kind.REGISTER,
            name,
            Outcome.INFO,
            "ignored: a " + info.getType() + " is not handled by the device manager");
        return false;
      }
      if (!info.getType().equals("DevicePlugin")) {
        String err =
            "RegisterPlugin error -- no handler registered for plugin type: "
                + info.getType()
                + " at socket "
                + socket;
        notifyPlugin(stub, name, false, err);
        journal.record(Kind.REGISTER, name, Outcome.FAILED, err);
        return true;
      }
      Path endpoint =
          info.getEndpoint().isEmpty() ? socket : Path.of(info.getEndpoint()).toAbsolutePath();
      String version =
          info.getSupportedVersionsList().stream()
              .filter(supportedVersions::contains)
              .findFirst()
              .orElse(null);
      String validation = null;
      if (version == null) {
        validation =
            "manager version, "
                + (supportedVersions.size() == 1
                    ? supportedVersions.get(0)
                    : ResourceNames.goList(supportedVersions))
                + ", is not among plugin supported versions "
                + ResourceNames.goList(info.getSupportedVersionsList());
      } else if (!ResourceNames.isExtendedResourceName(name)) {
        validation =
            "invalid name of device plugin socket: " + ResourceNames.invalidNameError(name);
      }
      if (validation != null) {
        String err = "RegisterPlugin error -- plugin validation failed with err: " + validation;
        journal.record(Kind.REGISTER, name, Outcome.FAILED, err);
        notifyPlugin(stub, name, false, err);
        return true;
      }
      if (!stillCurrent(begun, name, socket)) {
        return false;
      }
      try {
        connector.connect(name, endpoint, Registration.Mode.PLUGIN_WATCHER, version, socket);
      } catch (ConnectException e) {
        String err =
            "RegisterPlugin error -- plugin registration failed with err: " + e.getMessage();
        journal.record(Kind.REGISTER, name, Outcome.FAILED, err);
        notifyPlugin(stub, name, false, err);
        return false;
      }
      boolean removedMeanwhile;
      lock.lock();
      try {
        // Checked again after connecting, under the lock that clear() takes: a restart since the
        // check above must not find this socket registered afterwards, or its rediscovery is
        // skipped.
        if (!stillCurrent(begun, name, socket)) {
          dropStaleConnection(name, socket);
          return false;
        }
        watcherPlugins.put(socket, name);
        if (key != null) {
          registeredKeys.put(socket, key);
        }
        journal.record(
            Kind.REGISTER,
            name,
            Outcome.OK,
            "plugin watcher: socket=" + socket + " endpoint=" + endpoint + " version=" + version);
        removedMeanwhile = removedWhileInFlight.remove(socket);
      } finally {
        lock.unlock();
      }
      notifyPlugin(stub, name, true, "");
      if (removedMeanwhile) {
        // The socket vanished while it was being registered: deregister it now, as the kubelet's
        // reconciler does once the registration operation has finished.
        removed(socket);
      }
      return false;
    } finally {
      channel.shutdownNow();
    }
  }

  /** The DRA handler's side of a registration: validation, the plugin store, the notification. */
  private boolean registerDra(
      RegistrationGrpc.RegistrationBlockingStub stub,
      Path socket,
      PluginInfo info,
      long begun,
      Object key) {
    String name = info.getName();
    String err = dra.register(socket, info, () -> stillCurrent(begun, name, socket));
    if (err == null) {
      return false;
    }
    if (!err.isEmpty()) {
      notifyPlugin(stub, name, false, err);
      // Retried like a device plugin's failed validation; a refusal by the handler (the plugin
      // was in the kubelet's actual state by then) is not.
      return err.startsWith("RegisterPlugin error -- plugin validation failed");
    }
    boolean removedMeanwhile;
    lock.lock();
    try {
      // As for a device plugin: a restart since the DRA handler took the plugin has dropped it
      // (DRA_DEREGISTER); recording the socket now would keep the restarted kubelet from
      // rediscovering it.
      if (!stillCurrent(begun, name, socket)) {
        return false;
      }
      watcherPlugins.put(socket, name);
      draSockets.add(socket);
      if (key != null) {
        registeredKeys.put(socket, key);
      }
      removedMeanwhile = removedWhileInFlight.remove(socket);
    } finally {
      lock.unlock();
    }
    notifyPlugin(stub, name, true, "");
    if (removedMeanwhile) {
      removed(socket);
    }
    return false;
  }

  /** Undoes the connection an abandoned registration made (the restart already dropped others). */
  private void dropStaleConnection(String name, Path socket) {
    model.abandon(name, socket, "registration abandoned: the kubelet restarted");
  }

  private void notifyPlugin(
      RegistrationGrpc.RegistrationBlockingStub stub,
      String name,
      boolean registered,
      String error) {
    try {
      stub.withDeadlineAfter(FakeKubelet.NOTIFY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .notifyRegistrationStatus(
              RegistrationStatus.newBuilder()
                  .setPluginRegistered(registered)
                  .setError(error)
                  .build());
      journal.record(
          Kind.NOTIFY_REGISTRATION_STATUS,
          name,
          Outcome.OK,
          "plugin_registered=" + registered + (error.isEmpty() ? "" : " error=" + error));
    } catch (StatusRuntimeException e) {
      journal.record(
          Kind.NOTIFY_REGISTRATION_STATUS,
          name,
          Outcome.FAILED,
          "plugin_registered=" + registered + ": " + PluginConnector.describe(e.getStatus()));
    }
  }

  void removed(Path socket) {
    lock.lock();
    try {
      failures.remove(socket);
      String resource = watcherPlugins.remove(socket);
      registeredKeys.remove(socket);
      if (resource == null && watcherInFlight.contains(socket)) {
        removedWhileInFlight.add(socket);
        journal.record(
            Kind.DEREGISTER,
            "",
            Outcome.INFO,
            "registry socket removed while being registered: " + socket);
        return;
      }
      if (resource != null && draSockets.remove(socket)) {
        dra.deregister(socket);
        return;
      }
      if (resource == null || model.isClosed()) {
        return;
      }
      model.deregisterPlugin(resource, socket);
    } finally {
      lock.unlock();
    }
  }
}
