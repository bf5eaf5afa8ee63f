package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.GoErrors;
import io.github.deviceplugin4j.testkit.internal.ResourceNames;
import io.github.deviceplugin4j.testkit.internal.SocketFiles;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The kubelet's DRA side (its DRA plugin manager and the claim-info cache of its DRA manager):
 * validates {@code DRAPlugin} registrations found by the plugin watcher, keeps the plugins of each
 * driver, calls {@code NodePrepareResources} / {@code NodeUnprepareResources} with the kubelet's
 * checks, and watches device health on {@code NodeWatchResources}. Its state is guarded by the
 * journal's lock; RPCs run outside it.
 */
final class DraPluginManager {
  /**
   * The DRA services kubelets 1.34 and newer know, newest first ({@code servicesSupportedByKubelet}
   * in {@code pkg/kubelet/cm/dra/plugin/dra_plugin.go}).
   */
  static final List<String> KNOWN_SERVICES =
      List.of(FakeKubelet.DRA_V1_SERVICE, FakeKubelet.DRA_V1BETA1_SERVICE);

  /**
   * The DRA services kubelets 1.32 and 1.33 know, newest first ({@code validateSupportedServices}
   * in {@code pkg/kubelet/cm/dra/plugin/registration.go}): the last one is also their fallback.
   */
  static final List<String> KNOWN_SERVICES_V1_32 =
      List.of(FakeKubelet.DRA_V1BETA1_SERVICE, FakeKubelet.DRA_V1ALPHA3_FALLBACK_SERVICE);

  /** The kubelet re-opens an ended health stream after this period ({@code wait.Until}). */
  static final Duration HEALTH_RETRY_PERIOD = Duration.ofSeconds(5);

  private final UdsTransport transport;
  private final EventJournal journal;
  private final ReentrantLock lock;
  private final KubeletProfile profile;
  private final Duration callTimeout;
  private final Optional<String> healthService;
  // Guarded by lock.
  private final Map<String, List<Plugin>> store = new LinkedHashMap<>();
  private final Map<Path, Plugin> bySocket = new LinkedHashMap<>();
  private final List<DraRegistration> registrations = new ArrayList<>();
  private final Map<String, Map<String, DraDeviceHealth>> health = new LinkedHashMap<>();
  private final Map<String, CachedClaim> claims = new LinkedHashMap<>();
  private final Map<String, DraPod> pods = new LinkedHashMap<>();
  private boolean closed;

  /** One registered plugin instance of a driver. */
  private static final class Plugin {
    final String driver;
    final Path endpoint;
    final String service;
    final Path socket;
    final ManagedChannel channel;
    // Guarded by lock.
    ClientCallStreamObserver<?> healthCall;
    ScheduledFuture<?> healthRetry;
    boolean removed;
    boolean unimplementedSeen;

    Plugin(String driver, Path endpoint, String service, Path socket, ManagedChannel channel) {
      this.driver = driver;
      this.endpoint = endpoint;
      this.service = service;
      this.socket = socket;
      this.channel = channel;
    }
  }

  /** A claim in the kubelet's claim-info cache. */
  private static final class CachedClaim {
    final String driver;
    final DraClaim claim;
    final Set<String> pods = new LinkedHashSet<>();
    List<DraDevice> devices = List.of();
    // Restored after a kubelet restart, and prepared again when a pod needs it (v1.32/v1.33).
    boolean restored;

    CachedClaim(String driver, DraClaim claim) {
      this.driver = driver;
      this.claim = claim;
    }

    DraPreparedClaim view() {
      return new DraPreparedClaim(driver, claim, pods, devices);
    }
  }

  DraPluginManager(
      UdsTransport transport,
      EventJournal journal,
      KubeletProfile profile,
      Duration callTimeout,
      Optional<String> healthService) {
    this.transport = transport;
    this.journal = journal;
    this.lock = journal.lock();
    this.profile = profile;
    this.callTimeout = callTimeout;
    this.healthService = healthService;
  }

  // -------------------------------------------------------------------------------------------
  // Registration

  /**
   * Validates and registers a DRA plugin found at a registry socket, like the kubelet's plugin
   * manager calling the DRA handler's {@code ValidatePlugin} and {@code RegisterPlugin}.
   *
   * @return empty when registered; the text for {@code NotifyRegistrationStatus(false, ...)} when
   *     refused; null when abandoned (the kubelet restarted meanwhile)
   */
  String register(Path socket, PluginInfo info, BooleanSupplier stillCurrent) {
    String driver = info.getName();
    String endpointText = info.getEndpoint();
    List<String> offered = info.getSupportedVersionsList();
    String validation = validate(driver, endpointText, offered, profile);
    if (validation != null) {
      String err = "RegisterPlugin error -- plugin validation failed with err: " + validation;
      journal.record(Kind.DRA_REGISTER, driver, Outcome.FAILED, err);
      return err;
    }
    String service = chooseService(offered, profile);
    Path endpoint = Path.of(endpointText);
    if (!stillCurrent.getAsBoolean()) {
      return null;
    }
    lock.lock();
    try {
      if (closed) {
        return null;
      }
      for (Plugin old : store.getOrDefault(driver, List.of())) {
        if (old.endpoint.equals(endpoint)) {
          String err =
              "RegisterPlugin error -- plugin registration failed with err: endpoint "
                  + endpoint
                  + " already registered for DRA driver plugin "
                  + driver;
          journal.record(Kind.DRA_REGISTER, driver, Outcome.FAILED, err);
          return err;
        }
      }
      ManagedChannel channel = transport.channel(endpoint);
      // Like grpc.NewClient + Connect(): connect now, without waiting for it.
      channel.getState(true);
      Plugin p = new Plugin(driver, endpoint, service, socket, channel);
      store.computeIfAbsent(driver, d -> new ArrayList<>()).add(p);
      bySocket.put(socket, p);
      KubeletEvent e =
          journal.record(
              Kind.DRA_REGISTER,
              driver,
              Outcome.OK,
              "DRA plugin: socket="
                  + socket
                  + " endpoint="
                  + endpoint
                  + " service="
                  + service
                  + " plugins of the driver="
                  + store.get(driver).size(),
              Facts.of().endpoint(endpoint).version(service));
      registrations.add(
          new DraRegistration(
              driver,
              endpoint.toString(),
              service,
              socket.toString(),
              e.time(),
              e.seq(),
              e.nanos()));
      healthService.ifPresent(h -> openHealthStream(p));
      return "";
    } finally {
      lock.unlock();
    }
  }

  /**
   * The service the kubelet calls, like {@code validateSupportedServices}: 1.34 and newer take the
   * first entry of the plugin's list they know; 1.32/1.33 the newest they know, else their alpha
   * fallback {@code v1alpha3.Node}.
   */
  static String chooseService(List<String> offered, KubeletProfile profile) {
    if (profile.refusesUnknownDraServices()) {
      return offered.stream().filter(KNOWN_SERVICES::contains).findFirst().orElseThrow();
    }
    return KNOWN_SERVICES_V1_32.stream()
        .filter(offered::contains)
        .findFirst()
        .orElse(FakeKubelet.DRA_V1ALPHA3_FALLBACK_SERVICE);
  }

  /**
   * The kubelet's checks (service versions, by profile) and the fake's stricter ones (name,
   * endpoint).
   */
  private static String validate(
      String driver, String endpoint, List<String> offered, KubeletProfile profile) {
    String prefix =
        profile.refusesUnknownDraServices()
            ? "invalid supported gRPC versions of DRA driver plugin "
                + driver
                + " at endpoint "
                + endpoint
                + ": "
            : "invalid versions of plugin " + driver + ": ";
    if (offered.isEmpty()) {
      return prefix + "empty list of supported gRPC services (aka supported versions)";
    }
    if (profile.refusesUnknownDraServices()
        && offered.stream().noneMatch(KNOWN_SERVICES::contains)) {
      return prefix
          + "none of services supported by the plugin ("
          + ResourceNames.goQuoteList(offered)
          + ") are supported by the kubelet ("
          + ResourceNames.goQuoteList(KNOWN_SERVICES)
          + ")";
    }
    // Stricter than the kubelet, which accepts these and then fails later (its connection never
    // becomes ready, the API server rejects the driver's ResourceSlices): a clear error at once.
    if (!ResourceNames.isDnsSubdomain(driver)) {
      return "(fake kubelet check) the DRA driver name "
          + ResourceNames.goQuote(driver)
          + " is not a DNS subdomain (lower-case alphanumerics, '-' and '.', at most 253"
          + " characters): name the driver like a domain, e.g. fpga.example.com";
    }
    if (endpoint.isEmpty() || !Path.of(endpoint).isAbsolute()) {
      return "(fake kubelet check) the DRA plugin endpoint "
          + ResourceNames.goQuote(endpoint)
          + " is not an absolute path: set PluginInfo.endpoint to the absolute path of the"
          + " driver's DRA socket, e.g. /var/lib/kubelet/plugins/<driver>/dra.sock";
    }
    if (!SocketFiles.isSocket(Path.of(endpoint))) {
      return "(fake kubelet check) the DRA plugin endpoint "
          + endpoint
          + " is not a socket: serve DRAPlugin on it before creating the registration socket";
    }
    return null;
  }

  /** A registry socket vanished: the kubelet's {@code DeRegisterPlugin}. */
  void deregister(Path socket) {
    lock.lock();
    try {
      Plugin p = bySocket.remove(socket);
      if (p == null) {
        return;
      }
      List<Plugin> plugins = store.get(p.driver);
      plugins.remove(p);
      if (plugins.isEmpty()) {
        store.remove(p.driver);
      }
      stop(p);
      journal.record(
          Kind.DRA_DEREGISTER,
          p.driver,
          Outcome.INFO,
          "registry socket " + socket + " removed; plugins of the driver left=" + plugins.size(),
          Facts.of().endpoint(p.endpoint));
    } finally {
      lock.unlock();
    }
  }

  /** Under lock: cancels the plugin's health stream and closes its connection. */
  private void stop(Plugin p) {
    p.removed = true;
    if (p.healthRetry != null) {
      p.healthRetry.cancel(false);
    }
    if (p.healthCall != null) {
      p.healthCall.cancel("DRA plugin removed", null);
    }
    p.channel.shutdownNow();
  }

  /** A kubelet restart: every plugin is forgotten (claims and their devices are kept). */
  void kubeletRestarted() {
    lock.lock();
    try {
      for (Plugin p : bySocket.values()) {
        stop(p);
        journal.record(
            Kind.DRA_DEREGISTER,
            p.driver,
            Outcome.INFO,
            "kubelet restart: plugin at " + p.endpoint + " forgotten until it is rediscovered",
            Facts.of().endpoint(p.endpoint));
      }
      bySocket.clear();
      store.clear();
      health.clear();
      if (profile.preparesRestoredDraClaimsAgain()) {
        // v1.32/v1.33: claims restored from the DRA manager's checkpoint are sent to
        // NodePrepareResources again when their pods are admitted after the restart.
        claims.values().forEach(c -> c.restored = true);
      }
    } finally {
      lock.unlock();
    }
  }

  void close() {
    lock.lock();
    try {
      closed = true;
      for (Plugin p : bySocket.values()) {
        stop(p);
      }
      bySocket.clear();
      store.clear();
    } finally {
      lock.unlock();
    }
  }

  /** Like the kubelet's {@code get}: the newest plugin of the driver whose connection is up. */
  private Plugin current(String driver) {
    List<Plugin> plugins = store.getOrDefault(driver, List.of());
    for (int i = plugins.size() - 1; i >= 0; i--) {
      Plugin p = plugins.get(i);
      if (p.channel.getState(false) == io.grpc.ConnectivityState.READY) {
        return p;
      }
    }
    return plugins.isEmpty() ? null : plugins.get(plugins.size() - 1);
  }

  // -------------------------------------------------------------------------------------------
  // Health

  private void openHealthStream(Plugin p) {
    if (p.removed || closed) {
      return;
    }
    String which = healthService.orElseThrow();
    DraHealthStreams.Sink observer =
        new DraHealthStreams.Sink() {
          @Override
          public void started(ClientCallStreamObserver<?> call) {
            lock.lock();
            try {
              p.healthCall = call;
            } finally {
              lock.unlock();
            }
          }

          @Override
          public void onNext(List<DraDeviceHealth> devices) {
            received(p, devices);
          }

          @Override
          public void onError(Throwable t) {
            ended(p, Status.fromThrowable(t));
          }

          @Override
          public void onCompleted() {
            ended(p, Status.OK);
          }
        };
    DraHealthStreams.open(which, p.channel, p.driver, journal::now, observer);
  }

  private void received(Plugin p, List<DraDeviceHealth> devices) {
    lock.lock();
    try {
      if (p.removed) {
        return;
      }
      Map<String, DraDeviceHealth> byDevice =
          health.computeIfAbsent(p.driver, d -> new LinkedHashMap<>());
      long unhealthy = 0;
      for (DraDeviceHealth h : devices) {
        byDevice.put(h.poolName() + "/" + h.deviceName(), h);
        if (h.status() == DraDeviceHealth.Status.UNHEALTHY) {
          unhealthy++;
        }
      }
      journal.record(
          Kind.DRA_HEALTH,
          p.driver,
          Outcome.OK,
          devices.size() + " devices (" + unhealthy + " unhealthy): " + describe(devices),
          Facts.of().devices(devices.size()).endpoint(p.endpoint));
    } finally {
      lock.unlock();
    }
  }

  private static String describe(List<DraDeviceHealth> devices) {
    List<String> parts = new ArrayList<>();
    for (DraDeviceHealth h : devices) {
      parts.add(
          h.poolName()
              + "/"
              + h.deviceName()
              + "="
              + h.status()
              + (h.message().isEmpty() ? "" : " (" + h.message() + ")"));
    }
    return String.join(", ", parts);
  }

  private void ended(Plugin p, Status status) {
    lock.lock();
    try {
      p.healthCall = null;
      if (p.removed || closed) {
        return;
      }
      if (status.getCode() == Status.Code.UNIMPLEMENTED) {
        if (!p.unimplementedSeen) {
          p.unimplementedSeen = true;
          journal.record(
              Kind.DRA_HEALTH,
              p.driver,
              Outcome.INFO,
              "the driver does not serve "
                  + healthService.orElse("")
                  + " (UNIMPLEMENTED): accepted, no health for its devices",
              Facts.of().endpoint(p.endpoint));
        }
      } else {
        journal.record(
            Kind.DRA_HEALTH,
            p.driver,
            Outcome.INFO,
            "NodeWatchResources ended: "
                + PluginConnector.describe(status)
                + "; re-opened in "
                + HEALTH_RETRY_PERIOD.toSeconds()
                + " s",
            Facts.of().endpoint(p.endpoint));
      }
      p.healthRetry =
          transport
              .scheduler()
              .schedule(
                  () -> {
                    lock.lock();
                    try {
                      openHealthStream(p);
                    } finally {
                      lock.unlock();
                    }
                  },
                  HEALTH_RETRY_PERIOD.toNanos(),
                  TimeUnit.NANOSECONDS);
    } finally {
      lock.unlock();
    }
  }

  List<DraDeviceHealth> deviceHealth(String driver) {
    lock.lock();
    try {
      return List.copyOf(health.getOrDefault(driver, Map.of()).values());
    } finally {
      lock.unlock();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Prepare and unprepare

  /**
   * The kubelet's PrepareResources for one pod and driver: claims already prepared get the pod's
   * reference and are not sent again; the others go to the driver in one call.
   */
  DraResult prepare(String podUid, String driver, List<DraClaim> requested) {
    Map<String, DraClaimResult> cached = new LinkedHashMap<>();
    List<DraClaim> batch = new ArrayList<>();
    lock.lock();
    try {
      for (DraClaim c : requested) {
        CachedClaim info = claims.get(c.uid());
        if (info != null && info.driver.equals(driver) && !info.restored) {
          info.pods.add(podUid);
          cached.put(c.uid(), new DraClaimResult(info.devices, ""));
        } else {
          batch.add(c);
        }
      }
      if (batch.isEmpty()) {
        journal.record(
            Kind.DRA_PREPARE,
            driver,
            Outcome.OK,
            "pod " + podUid + ": every claim already prepared, no call: " + cached.keySet());
        return new DraResult(
            "NodePrepareResources", driver, cached, Optional.empty(), Optional.empty());
      }
    } finally {
      lock.unlock();
    }
    DraResult r = call(true, driver, batch, "pod " + podUid + ": ");
    Map<String, DraClaimResult> all = new LinkedHashMap<>(cached);
    all.putAll(r.claims());
    if (r.ok()) {
      lock.lock();
      try {
        for (DraClaim c : batch) {
          CachedClaim info = claims.get(c.uid());
          if (info == null || !info.driver.equals(driver)) {
            info = new CachedClaim(driver, c);
            claims.put(c.uid(), info);
          }
          info.restored = false;
          info.pods.add(podUid);
          info.devices = r.claims().get(c.uid()).devices();
        }
      } finally {
        lock.unlock();
      }
    }
    return new DraResult(r.operation(), driver, all, r.callError(), r.kubeletError());
  }

  /**
   * The kubelet's UnprepareResources for one pod and driver: a claim other pods still use only
   * loses the pod's reference; the others are unprepared in one call and forgotten on success.
   */
  DraResult unprepare(String podUid, String driver) {
    List<DraClaim> batch = new ArrayList<>();
    lock.lock();
    try {
      for (CachedClaim info : claims.values()) {
        if (!info.driver.equals(driver) || !info.pods.contains(podUid)) {
          continue;
        }
        if (info.pods.size() > 1) {
          info.pods.remove(podUid);
        } else {
          batch.add(info.claim);
        }
      }
      if (batch.isEmpty()) {
        journal.record(
            Kind.DRA_UNPREPARE,
            driver,
            Outcome.OK,
            "pod " + podUid + ": no claim left to unprepare, no call");
        return new DraResult(
            "NodeUnprepareResources", driver, Map.of(), Optional.empty(), Optional.empty());
      }
    } finally {
      lock.unlock();
    }
    DraResult r = call(false, driver, batch, "pod " + podUid + ": ");
    if (r.ok()) {
      lock.lock();
      try {
        for (DraClaim c : batch) {
          claims.remove(c.uid());
        }
      } finally {
        lock.unlock();
      }
    }
    return r;
  }

  /** Records which containers of a running pod use which claims, for PodResources. */
  void podStarted(DraPod pod) {
    lock.lock();
    try {
      pods.put(pod.uid(), pod);
      journal.record(
          Kind.POD_RESOURCES,
          "",
          Outcome.OK,
          "DRA pod "
              + pod.namespace()
              + "/"
              + pod.name()
              + " runs; containers' claims: "
              + pod.containers());
    } finally {
      lock.unlock();
    }
  }

  /**
   * The running pods that still hold at least one prepared claim, each with the prepared claims of
   * its containers (the claim-info cache's view; a claim unprepared for the pod is gone from it).
   */
  List<PodClaims> runningPods() {
    lock.lock();
    try {
      List<PodClaims> out = new ArrayList<>();
      for (DraPod pod : pods.values()) {
        Map<String, List<DraPreparedClaim>> containers = new LinkedHashMap<>();
        boolean any = false;
        for (Map.Entry<String, List<String>> c : pod.containers().entrySet()) {
          List<DraPreparedClaim> used = new ArrayList<>();
          for (String uid : c.getValue()) {
            CachedClaim info = claims.get(uid);
            if (info != null && info.pods.contains(pod.uid())) {
              used.add(info.view());
              any = true;
            }
          }
          containers.put(c.getKey(), used);
        }
        if (any) {
          out.add(new PodClaims(pod, containers));
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** A running pod and, per container, the prepared claims it uses. */
  record PodClaims(DraPod pod, Map<String, List<DraPreparedClaim>> containers) {}

  List<DraPreparedClaim> preparedClaims() {
    lock.lock();
    try {
      return claims.values().stream().map(CachedClaim::view).toList();
    } finally {
      lock.unlock();
    }
  }

  List<DraRegistration> registrations() {
    lock.lock();
    try {
      return List.copyOf(registrations);
    } finally {
      lock.unlock();
    }
  }

  /** The current plugin's registration of the driver, if one is registered now. */
  Optional<DraRegistration> registration(String driver) {
    lock.lock();
    try {
      Plugin p = current(driver);
      if (p == null) {
        return Optional.empty();
      }
      for (int i = registrations.size() - 1; i >= 0; i--) {
        DraRegistration r = registrations.get(i);
        if (r.driver().equals(driver) && r.registrySocket().equals(p.socket.toString())) {
          return Optional.of(r);
        }
      }
      return Optional.empty();
    } finally {
      lock.unlock();
    }
  }

  /**
   * One call as given, checked like the kubelet: a call error, an answer for an unknown claim, a
   * per-claim error, claims missing from the answer.
   */
  DraResult call(boolean prepare, String driver, List<DraClaim> batch, String context) {
    String op = prepare ? "NodePrepareResources" : "NodeUnprepareResources";
    Kind kind = prepare ? Kind.DRA_PREPARE : Kind.DRA_UNPREPARE;
    Plugin p;
    lock.lock();
    try {
      p = current(driver);
    } finally {
      lock.unlock();
    }
    if (p == null) {
      String err =
          driver.isEmpty()
              ? "DRA driver name is empty"
              : "DRA driver " + driver + " is not registered";
      journal.record(kind, driver, Outcome.FAILED, context + err);
      return new DraResult(op, driver, Map.of(), Optional.empty(), Optional.of(err));
    }
    Map<String, DraClaimResult> answer;
    try {
      answer = DraCalls.call(prepare, p.service, p.channel, batch, callTimeout);
    } catch (StatusRuntimeException e) {
      String callError = GoErrors.rpcError(e.getStatus());
      String err = op + ": " + callError;
      journal.record(kind, driver, Outcome.FAILED, context + err, Facts.of().endpoint(p.endpoint));
      return new DraResult(op, driver, Map.of(), Optional.of(callError), Optional.of(err));
    }
    String err = check(op, batch, answer, DraClaim::uid);
    journal.record(
        kind,
        driver,
        err == null ? Outcome.OK : Outcome.FAILED,
        context
            + (err == null ? "" : err + "; ")
            + batch.size()
            + " claims sent, answer: "
            + describeAnswer(answer),
        Facts.of().endpoint(p.endpoint).version(p.service));
    return new DraResult(op, driver, answer, Optional.empty(), Optional.ofNullable(err));
  }

  private static String check(
      String op,
      List<DraClaim> batch,
      Map<String, DraClaimResult> answer,
      Function<DraClaim, String> uid) {
    for (Map.Entry<String, DraClaimResult> e : answer.entrySet()) {
      DraClaim asked =
          batch.stream().filter(c -> uid.apply(c).equals(e.getKey())).findFirst().orElse(null);
      if (asked == null) {
        return op + " returned result for unknown claim UID " + e.getKey();
      }
      if (!e.getValue().ok()) {
        return op + " failed for ResourceClaim " + asked.name() + ": " + e.getValue().error();
      }
    }
    int unfinished = batch.size() - answer.size();
    if (unfinished != 0) {
      return op + " skipped " + unfinished + " ResourceClaims";
    }
    return null;
  }

  private static String describeAnswer(Map<String, DraClaimResult> answer) {
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, DraClaimResult> e : answer.entrySet()) {
      DraClaimResult r = e.getValue();
      parts.add(
          e.getKey()
              + (r.ok()
                  ? " -> "
                      + r.devices().stream().map(d -> d.poolName() + "/" + d.deviceName()).toList()
                  : " error: " + r.error()));
    }
    return parts.isEmpty() ? "(no entries)" : String.join("; ", parts);
  }
}
