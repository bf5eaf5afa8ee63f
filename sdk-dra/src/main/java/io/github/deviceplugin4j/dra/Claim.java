package io.github.deviceplugin4j.dra;

import java.util.Objects;

/**
 * A ResourceClaim the kubelet asks a driver to prepare or unprepare, as the kubelet names it.
 *
 * <p>The UID identifies the claim: a claim deleted and created again under the same name has a new
 * UID. The host never hands a driver a claim with an empty UID, namespace or name: it answers such
 * a claim with a per-claim error itself.
 *
 * @param namespace the claim's namespace
 * @param uid the claim's UID
 * @param name the claim's name
 */
public record Claim(String namespace, String uid, String name) {

  /**
   * Checks that no part is null.
   *
   * @param namespace the claim's namespace
   * @param uid the claim's UID
   * @param name the claim's name
   */
  public Claim {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(name, "name");
  }

  /**
   * How logs and error messages name the claim: {@code namespace/name (uid)}.
   *
   * @return the claim's description
   */
  @Override
  public String toString() {
    return namespace + "/" + name + " (" + uid + ")";
  }
}
