package io.github.deviceplugin4j.core.podresources;

import java.util.List;
import java.util.Objects;

/**
 * A DRA ResourceClaim a container uses, with the devices the kubelet prepared for it ({@code
 * DynamicResource} of the PodResources API, Kubernetes 1.28 and newer with DRA).
 *
 * @param claimName the claim's name (for a pod's extended resources served by DRA: the claim the
 *     scheduler made, {@code <pod>-extended-resources-<random>})
 * @param claimNamespace the claim's namespace
 * @param claimResources the claim's devices
 */
public record DynamicResource(
    String claimName, String claimNamespace, List<ClaimResource> claimResources) {

  /**
   * Checks for nulls and copies the list.
   *
   * @param claimName see {@link #claimName()}
   * @param claimNamespace see {@link #claimNamespace()}
   * @param claimResources see {@link #claimResources()}
   */
  public DynamicResource {
    Objects.requireNonNull(claimName, "claimName");
    Objects.requireNonNull(claimNamespace, "claimNamespace");
    claimResources = List.copyOf(claimResources);
  }
}
