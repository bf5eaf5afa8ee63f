package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequest;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraPod;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a 1.34+ kubelet's DRA manager does with a pod before it starts it ({@code prepareResources}
 * in {@code pkg/kubelet/cm/dra/manager.go}), on the fake kubelet: the pod's claims are its {@code
 * spec.resourceClaims} (by {@code resourceClaimName}, or the generated name in {@code
 * status.resourceClaimStatuses}) plus the claim the scheduler made for its extended resources
 * ({@code status.extendedResourceClaimStatus.resourceClaimName}); each is read from the API server,
 * must be reserved for the pod and allocated; then each driver gets one prepare call with its
 * claims. Which container uses which claim ({@code GetContainerClaimInfos}: the container's {@code
 * resources.claims}, and the extended-resource claim for containers named in its request mappings)
 * goes to the fake kubelet for the PodResources API.
 */
final class PodPreparer {
  private final KubernetesClient client;
  private final FakeKubelet kubelet;

  PodPreparer(KubernetesClient client, FakeKubelet kubelet) {
    this.client = client;
    this.kubelet = kubelet;
  }

  Map<String, DraResult> prepare(String namespace, String podName) {
    Pod pod = pod(namespace, podName);
    String podUid = pod.getMetadata().getUid();
    Map<String, io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim> byPodClaim =
        new LinkedHashMap<>();
    Map<String, List<DraClaim>> batches = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : claimNames(pod).entrySet()) {
      var claim =
          client
              .dynamicResourceAllocation()
              .v1()
              .resourceClaims()
              .inNamespace(namespace)
              .withName(e.getValue())
              .get();
      if (claim == null) {
        throw new IllegalStateException(
            "prepare dynamic resources: fetch ResourceClaim "
                + e.getValue()
                + ": resourceclaims.resource.k8s.io \""
                + e.getValue()
                + "\" not found");
      }
      boolean reserved =
          claim.getStatus() != null
              && claim.getStatus().getReservedFor() != null
              && claim.getStatus().getReservedFor().stream()
                  .anyMatch(r -> podUid.equals(r.getUid()));
      if (!reserved) {
        throw new IllegalStateException(
            "prepare dynamic resources: pod "
                + podName
                + " ("
                + podUid
                + ") is not allowed to use ResourceClaim "
                + e.getValue()
                + " ("
                + claim.getMetadata().getUid()
                + ")");
      }
      if (claim.getStatus().getAllocation() == null) {
        throw new IllegalStateException(
            "prepare dynamic resources: ResourceClaim " + e.getValue() + ": not allocated");
      }
      byPodClaim.put(e.getKey(), claim);
      Set<String> drivers = new LinkedHashSet<>();
      for (DeviceRequestAllocationResult r :
          claim.getStatus().getAllocation().getDevices().getResults()) {
        drivers.add(r.getDriver());
      }
      DraClaim wire =
          new DraClaim(namespace, claim.getMetadata().getUid(), claim.getMetadata().getName());
      for (String driver : drivers) {
        batches.computeIfAbsent(driver, d -> new ArrayList<>()).add(wire);
      }
    }
    Map<String, DraResult> results = new LinkedHashMap<>();
    for (Map.Entry<String, List<DraClaim>> b : batches.entrySet()) {
      DraResult r = kubelet.dra().prepareResources(podUid, b.getKey(), b.getValue());
      results.put(b.getKey(), r);
      if (!r.ok()) {
        return results; // the kubelet aborts at the first failing driver
      }
    }
    kubelet.dra().podStarted(new DraPod(podUid, namespace, podName, containers(pod, byPodClaim)));
    return results;
  }

  Map<String, DraResult> unprepare(String namespace, String podName) {
    Pod pod = pod(namespace, podName);
    Set<String> drivers = new LinkedHashSet<>();
    for (var prepared : kubelet.dra().preparedClaims()) {
      if (prepared.podUids().contains(pod.getMetadata().getUid())) {
        drivers.add(prepared.driver());
      }
    }
    Map<String, DraResult> results = new LinkedHashMap<>();
    for (String driver : drivers) {
      results.put(driver, kubelet.dra().unprepareResources(pod.getMetadata().getUid(), driver));
    }
    return results;
  }

  private Pod pod(String namespace, String podName) {
    Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
    if (pod == null) {
      throw new IllegalStateException("no pod " + namespace + "/" + podName);
    }
    return pod;
  }

  /**
   * The pod's claims by the name the pod gives them (the extended-resource claim under an empty
   * name, as the kubelet adds it with only {@code ResourceClaimName} set).
   */
  private static Map<String, String> claimNames(Pod pod) {
    Map<String, String> out = new LinkedHashMap<>();
    List<PodResourceClaimStatus> statuses =
        pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null
            ? List.of()
            : pod.getStatus().getResourceClaimStatuses();
    for (PodResourceClaim pc : orEmpty(pod.getSpec().getResourceClaims())) {
      String name = pc.getResourceClaimName();
      if (name == null) {
        name =
            statuses.stream()
                .filter(s -> s.getName().equals(pc.getName()))
                .map(PodResourceClaimStatus::getResourceClaimName)
                .findFirst()
                .orElse(null);
      }
      if (name != null) {
        out.put(pc.getName(), name);
      }
    }
    if (pod.getStatus() != null && pod.getStatus().getExtendedResourceClaimStatus() != null) {
      out.put("", pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName());
    }
    return out;
  }

  private static Map<String, List<String>> containers(
      Pod pod, Map<String, io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim> claims) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    List<Container> all = new ArrayList<>(orEmpty(pod.getSpec().getInitContainers()));
    all.addAll(orEmpty(pod.getSpec().getContainers()));
    var extended =
        pod.getStatus() == null ? null : pod.getStatus().getExtendedResourceClaimStatus();
    for (Container c : all) {
      List<String> uids = new ArrayList<>();
      List<ResourceClaim> used =
          c.getResources() == null || c.getResources().getClaims() == null
              ? List.of()
              : c.getResources().getClaims();
      for (ResourceClaim ref : used) {
        var claim = claims.get(ref.getName());
        if (claim != null && !uids.contains(claim.getMetadata().getUid())) {
          uids.add(claim.getMetadata().getUid());
        }
      }
      if (extended != null && claims.containsKey("")) {
        for (ContainerExtendedResourceRequest m : orEmpty(extended.getRequestMappings())) {
          String uid = claims.get("").getMetadata().getUid();
          if (m.getContainerName().equals(c.getName()) && !uids.contains(uid)) {
            uids.add(uid);
          }
        }
      }
      out.put(c.getName(), uids);
    }
    return out;
  }

  private static <T> List<T> orEmpty(List<T> l) {
    return l == null ? List.of() : l;
  }
}
