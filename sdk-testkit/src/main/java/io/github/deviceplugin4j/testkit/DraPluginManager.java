package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The kubelet's DRA side, wired from parts that each own one kind of state: the {@link
 * DraPluginStore} (registrations and the plugins of each driver), the {@link DraHealthWatch}
 * (health streams and device health), the {@link DraClaimPreparer} (prepare/unprepare and the
 * claim-info cache) and the {@link DraRunningPods} (the pods for PodResources). It holds no state
 * of its own: it builds the parts, orders a kubelet restart and a close across them, and delegates
 * the rest. Tests reach it through its public facade, {@link DraKubelet}.
 */
final class DraPluginManager {
  private final ReentrantLock lock;
  private final DraHealthWatch health;
  private final DraPluginStore plugins;
  private final DraClaimPreparer claims;
  private final DraRunningPods pods;

  DraPluginManager(
      UdsTransport transport,
      EventJournal journal,
      KubeletProfile profile,
      Duration callTimeout,
      Optional<String> healthService) {
    this.lock = journal.lock();
    this.health = new DraHealthWatch(transport, journal, healthService);
    this.plugins = new DraPluginStore(transport, journal, profile, health);
    this.claims = new DraClaimPreparer(journal, profile, callTimeout, plugins);
    this.pods = new DraRunningPods(journal, claims);
  }

  /** See {@link DraPluginStore#register}. */
  String register(Path socket, PluginInfo info, BooleanSupplier stillCurrent) {
    return plugins.register(socket, info, stillCurrent);
  }

  /** See {@link DraPluginStore#deregister}. */
  void deregister(Path socket) {
    plugins.deregister(socket);
  }

  /**
   * A kubelet restart, as one step: every plugin and the health they reported are forgotten; claims
   * and their devices are kept.
   */
  void kubeletRestarted() {
    lock.lock();
    try {
      plugins.kubeletRestarted();
      health.kubeletRestarted();
      claims.kubeletRestarted();
    } finally {
      lock.unlock();
    }
  }

  void close() {
    lock.lock();
    try {
      health.close();
      plugins.close();
    } finally {
      lock.unlock();
    }
  }

  List<DraRegistration> registrations() {
    return plugins.registrations();
  }

  /** The current plugin's registration of the driver, if one is registered now. */
  Optional<DraRegistration> registration(String driver) {
    return plugins.registration(driver);
  }

  List<DraDeviceHealth> deviceHealth(String driver) {
    return health.deviceHealth(driver);
  }

  /** See {@link DraClaimPreparer#prepare}. */
  DraResult prepare(String podUid, String driver, List<DraClaim> requested) {
    return claims.prepare(podUid, driver, requested);
  }

  /** See {@link DraClaimPreparer#unprepare}. */
  DraResult unprepare(String podUid, String driver) {
    return claims.unprepare(podUid, driver);
  }

  /** See {@link DraClaimPreparer#call}. */
  DraResult call(boolean prepare, String driver, List<DraClaim> batch, String context) {
    return claims.call(prepare, driver, batch, context);
  }

  List<DraPreparedClaim> preparedClaims() {
    return claims.preparedClaims();
  }

  /** See {@link DraRunningPods#podStarted}. */
  void podStarted(DraPod pod) {
    pods.podStarted(pod);
  }

  /** See {@link DraRunningPods#runningPods}. */
  List<DraRunningPods.PodClaims> runningPods() {
    return pods.runningPods();
  }
}
