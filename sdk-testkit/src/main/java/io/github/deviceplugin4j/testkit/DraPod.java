package io.github.deviceplugin4j.testkit;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A pod the fake kubelet runs with prepared DRA claims, and which of its containers use which
 * claim: what the kubelet reads from the pod spec ({@code resources.claims} of each container, and
 * for the claim the scheduler made for extended resources, {@code
 * status.extendedResourceClaimStatus.requestMappings}; {@code GetContainerClaimInfos} in {@code
 * pkg/kubelet/cm/dra/manager.go}). The PodResources API lists the claims' devices per container
 * from it ({@link DraKubelet#podStarted}).
 *
 * @param uid the pod's UID, as given to {@link DraKubelet#prepareResources}
 * @param namespace the pod's namespace
 * @param name the pod's name
 * @param containers per container name, the UIDs of the claims it uses (in the pod's order)
 */
public record DraPod(
    String uid, String namespace, String name, Map<String, List<String>> containers) {

  /**
   * Checks and copies the components.
   *
   * @param uid see {@link #uid()}
   * @param namespace see {@link #namespace()}
   * @param name see {@link #name()}
   * @param containers see {@link #containers()}
   */
  public DraPod {
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Map<String, List<String>> copy = new LinkedHashMap<>();
    containers.forEach((c, claims) -> copy.put(c, List.copyOf(claims)));
    containers = java.util.Collections.unmodifiableMap(copy);
  }
}
