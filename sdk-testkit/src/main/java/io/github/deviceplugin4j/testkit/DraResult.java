package io.github.deviceplugin4j.testkit;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of a {@code NodePrepareResources} or {@code NodeUnprepareResources} exchange with a
 * DRA driver, checked like the kubelet checks it.
 *
 * <p>{@link #claims()} holds what the driver answered, keyed by claim UID (and, for {@link
 * DraKubelet#prepareResources}, the claims the kubelet found already prepared and did not send
 * again). {@link #callError()} is set when the call failed as a whole (a gRPC error status); {@link
 * #kubeletError()} is what the kubelet makes of the exchange: the call error, an answer for a claim
 * it did not ask about, the first per-claim error, or claims missing from the answer
 * (&quot;NodePrepareResources skipped N ResourceClaims&quot;). A pod whose prepare has a kubelet
 * error does not start on a node.
 *
 * @param operation {@code NodePrepareResources} or {@code NodeUnprepareResources}
 * @param driver the DRA driver name
 * @param claims the per-claim answers by claim UID
 * @param callError the gRPC failure of the call as a whole, when it failed
 * @param kubeletError the kubelet's error for this exchange, empty when it accepts it
 */
public record DraResult(
    String operation,
    String driver,
    Map<String, DraClaimResult> claims,
    Optional<String> callError,
    Optional<String> kubeletError) {

  /**
   * Checks and copies the components (the claims keep their order).
   *
   * @param operation see {@link #operation()}
   * @param driver see {@link #driver()}
   * @param claims see {@link #claims()}
   * @param callError see {@link #callError()}
   * @param kubeletError see {@link #kubeletError()}
   */
  public DraResult {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(driver, "driver");
    claims = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(claims));
    Objects.requireNonNull(callError, "callError");
    Objects.requireNonNull(kubeletError, "kubeletError");
  }

  /**
   * Whether the kubelet accepts the exchange.
   *
   * @return true when there is no {@link #kubeletError()}
   */
  public boolean ok() {
    return kubeletError.isEmpty();
  }

  /**
   * The answer for one claim.
   *
   * @param uid the claim UID
   * @return the driver's answer for it
   * @throws AssertionError when the answer has no entry for the claim
   */
  public DraClaimResult claim(String uid) {
    DraClaimResult r = claims.get(uid);
    if (r == null) {
      throw new AssertionError(
          operation + " of " + driver + " has no entry for claim UID " + uid + ": " + this);
    }
    return r;
  }
}
