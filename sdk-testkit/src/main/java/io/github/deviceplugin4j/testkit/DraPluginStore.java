package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.ResourceNames;
import io.github.deviceplugin4j.testkit.internal.SocketFiles;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The kubelet's DRA plugin store (its DRA handler and {@code pkg/kubelet/cm/dra/plugin}): validates
 * {@code DRAPlugin} registrations found by the plugin watcher, chooses the service to call, and
 * keeps the plugins of each driver, by registry socket, and every registration made. A new plugin
 * is handed to the {@link DraHealthWatch}; a removed one is taken from it. Its state is guarded by
 * the journal's lock.
 */
final class DraPluginStore {
  /**
   * The DRA services kubelets 1.34 and newer know, newest first ({@code servicesSupportedByKubelet}
   * in {@code pkg/kubelet/cm/dra/plugin/dra_plugin.go}).
   */
  static final List<String> KNOWN_SERVICES =
      List.of(DraKubelet.V1_SERVICE, DraKubelet.V1BETA1_SERVICE);

  /**
   * The DRA services kubelets 1.32 and 1.33 know, newest first ({@code validateSupportedServices}
   * in {@code pkg/kubelet/cm/dra/plugin/registration.go}): the last one is also their fallback.
   */
  static final List<String> KNOWN_SERVICES_V1_32 =
      List.of(DraKubelet.V1BETA1_SERVICE, DraKubelet.V1ALPHA3_FALLBACK_SERVICE);

  private final UdsTransport transport;
  private final EventJournal journal;
  private final ReentrantLock lock;
  private final KubeletProfile profile;
  private final DraHealthWatch health;
  // Guarded by lock.
  private final Map<String, List<DraPlugin>> store = new LinkedHashMap<>();
  private final Map<Path, DraPlugin> bySocket = new LinkedHashMap<>();
  private final List<DraRegistration> registrations = new ArrayList<>();
  private boolean closed;

  DraPluginStore(
      UdsTransport transport, EventJournal journal, KubeletProfile profile, DraHealthWatch health) {
    this.transport = transport;
    this.journal = journal;
    this.lock = journal.lock();
    this.profile = profile;
    this.health = health;
  }

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
      for (DraPlugin old : store.getOrDefault(driver, List.of())) {
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
      DraPlugin p = new DraPlugin(driver, endpoint, service, socket, channel);
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
      health.watch(p);
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
        .orElse(DraKubelet.V1ALPHA3_FALLBACK_SERVICE);
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
      DraPlugin p = bySocket.remove(socket);
      if (p == null) {
        return;
      }
      List<DraPlugin> plugins = store.get(p.driver);
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
  private void stop(DraPlugin p) {
    health.stop(p);
    p.channel.shutdownNow();
  }

  /** A kubelet restart: every plugin is forgotten until it is rediscovered. */
  void kubeletRestarted() {
    lock.lock();
    try {
      for (DraPlugin p : bySocket.values()) {
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
    } finally {
      lock.unlock();
    }
  }

  void close() {
    lock.lock();
    try {
      closed = true;
      for (DraPlugin p : bySocket.values()) {
        stop(p);
      }
      bySocket.clear();
      store.clear();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Like the kubelet's {@code get}: the newest plugin of the driver whose connection is up; null
   * when the driver has none.
   */
  DraPlugin current(String driver) {
    lock.lock();
    try {
      return currentLocked(driver);
    } finally {
      lock.unlock();
    }
  }

  private DraPlugin currentLocked(String driver) {
    List<DraPlugin> plugins = store.getOrDefault(driver, List.of());
    for (int i = plugins.size() - 1; i >= 0; i--) {
      DraPlugin p = plugins.get(i);
      if (p.channel.getState(false) == io.grpc.ConnectivityState.READY) {
        return p;
      }
    }
    return plugins.isEmpty() ? null : plugins.get(plugins.size() - 1);
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
      DraPlugin p = currentLocked(driver);
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
}
