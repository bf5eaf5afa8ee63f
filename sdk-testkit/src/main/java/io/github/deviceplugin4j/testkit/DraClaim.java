package io.github.deviceplugin4j.testkit;

import java.util.Objects;

/**
 * A ResourceClaim as the kubelet names it to a DRA driver in {@code NodePrepareResources} and
 * {@code NodeUnprepareResources}.
 *
 * @param namespace the claim's namespace
 * @param uid the claim's UID: the key of the driver's response map
 * @param name the claim's name
 */
public record DraClaim(String namespace, String uid, String name) {

  /**
   * Checks the components.
   *
   * @param namespace see {@link #namespace()}
   * @param uid see {@link #uid()}
   * @param name see {@link #name()}
   */
  public DraClaim {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(name, "name");
  }
}
