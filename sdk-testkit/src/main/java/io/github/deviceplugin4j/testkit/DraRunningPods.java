package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The DRA pods the kubelet runs, each with the claims its containers use, for PodResources. The
 * claims themselves are the {@link DraClaimPreparer}'s. Its state is guarded by the journal's lock.
 */
final class DraRunningPods {
  private final EventJournal journal;
  private final ReentrantLock lock;
  private final DraClaimPreparer claims;
  // Guarded by lock.
  private final Map<String, DraPod> pods = new LinkedHashMap<>();

  /** A running pod and, per container, the prepared claims it uses. */
  record PodClaims(DraPod pod, Map<String, List<DraPreparedClaim>> containers) {}

  DraRunningPods(EventJournal journal, DraClaimPreparer claims) {
    this.journal = journal;
    this.lock = journal.lock();
    this.claims = claims;
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
            Optional<DraPreparedClaim> held = claims.heldBy(uid, pod.uid());
            if (held.isPresent()) {
              used.add(held.get());
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
}
