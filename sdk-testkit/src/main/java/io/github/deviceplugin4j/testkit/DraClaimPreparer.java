package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.GoErrors;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The kubelet's DRA manager's prepare/unprepare path and its claim-info cache: which claims are
 * prepared, for which pods, with which devices. Calls {@code NodePrepareResources} / {@code
 * NodeUnprepareResources} on the driver's current plugin (from the {@link DraPluginStore}) with the
 * kubelet's checks. The cache survives kubelet restarts. Its state is guarded by the journal's
 * lock; RPCs run outside it.
 */
final class DraClaimPreparer {
  private final EventJournal journal;
  private final ReentrantLock lock;
  private final KubeletProfile profile;
  private final Duration callTimeout;
  private final DraPluginStore plugins;
  // Guarded by lock.
  private final Map<String, CachedClaim> claims = new LinkedHashMap<>();

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

  DraClaimPreparer(
      EventJournal journal, KubeletProfile profile, Duration callTimeout, DraPluginStore plugins) {
    this.journal = journal;
    this.lock = journal.lock();
    this.profile = profile;
    this.callTimeout = callTimeout;
    this.plugins = plugins;
  }

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

  /** A kubelet restart: the cache is kept, restored from the DRA manager's checkpoint. */
  void kubeletRestarted() {
    lock.lock();
    try {
      if (profile.preparesRestoredDraClaimsAgain()) {
        // v1.32/v1.33: claims restored from the DRA manager's checkpoint are sent to
        // NodePrepareResources again when their pods are admitted after the restart.
        claims.values().forEach(c -> c.restored = true);
      }
    } finally {
      lock.unlock();
    }
  }

  List<DraPreparedClaim> preparedClaims() {
    lock.lock();
    try {
      return claims.values().stream().map(CachedClaim::view).toList();
    } finally {
      lock.unlock();
    }
  }

  /** The prepared claim, if the pod holds a reference to it. */
  Optional<DraPreparedClaim> heldBy(String claimUid, String podUid) {
    lock.lock();
    try {
      CachedClaim info = claims.get(claimUid);
      if (info != null && info.pods.contains(podUid)) {
        return Optional.of(info.view());
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
    DraPlugin p = plugins.current(driver);
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
