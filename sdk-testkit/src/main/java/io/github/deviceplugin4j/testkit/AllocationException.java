package io.github.deviceplugin4j.testkit;

import io.grpc.Status;
import java.util.Objects;

/**
 * An allocation failed: the kubelet refused it, an RPC to the plugin failed, or the plugin's answer
 * broke the protocol (for example an empty {@code container_responses}).
 *
 * <p>When the fake fails an allocation the way the kubelet fails a pod's admission, {@link
 * #getMessage()} is the kubelet's text for it, as a pod's {@code UnexpectedAdmissionError} shows
 * it: {@code Allocate failed due to <the device manager's error>, which is unexpected} ({@code
 * pkg/kubelet/cm/admission/errors.go}), with gRPC failures of the plugin in grpc-go's form ({@code
 * rpc error: code = InvalidArgument desc = ...}); a failed {@code PreStartContainer}, which the
 * kubelet runs when it starts the container, reads {@code device plugin PreStartContainer rpc
 * failed with err: rpc error: ...}. Checks of the fake's own (a strict {@code
 * GetPreferredAllocation} check, several container responses) keep the form {@code invalid <rpc>
 * response from the plugin: ...}. {@link #reason()}, {@link #code()}, {@link #rpc()} and {@link
 * #description()} give the parts.
 */
public final class AllocationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why an allocation failed. */
  public enum Reason {
    /** The kubelet refused before calling the plugin (unknown resource, too few devices...). */
    NOT_ALLOCATABLE,
    /**
     * The resource's current endpoint is stopped: a client of the resource was disconnected (its
     * stream ended) and no plugin registered since, so the kubelet fails {@code
     * GetPreferredAllocation}, {@code Allocate} and {@code PreStartContainer} with "endpoint ...
     * has been stopped", even when the device list shows healthy devices again.
     */
    ENDPOINT_STOPPED,
    /** An RPC to the plugin failed; {@link #code()} is the plugin's status code. */
    RPC_FAILED,
    /** The plugin answered, but the answer breaks the protocol. */
    INVALID_RESPONSE
  }

  /** Why it failed. */
  private final Reason reason;

  /** The gRPC status code. */
  private final Status.Code code;

  /** The RPC involved, or empty. */
  private final String rpc;

  /** What went wrong. */
  private final String description;

  /**
   * Creates the exception.
   *
   * @param reason why it failed
   * @param code the gRPC code: the plugin's for {@link Reason#RPC_FAILED}, otherwise {@code
   *     FAILED_PRECONDITION} (kubelet refused) or {@code INTERNAL} (invalid answer)
   * @param rpc the RPC involved ({@code Allocate}, {@code GetPreferredAllocation}, {@code
   *     PreStartContainer}) or {@code ""}
   * @param description what went wrong
   * @param cause the gRPC exception, or null
   */
  public AllocationException(
      Reason reason, Status.Code code, String rpc, String description, Throwable cause) {
    super(message(reason, code, rpc, description), cause);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.code = Objects.requireNonNull(code, "code");
    this.rpc = Objects.requireNonNull(rpc, "rpc");
    this.description = Objects.requireNonNull(description, "description");
  }

  /** With the message the kubelet prints for this failure. */
  AllocationException(
      Reason reason,
      Status.Code code,
      String rpc,
      String description,
      Throwable cause,
      String kubeletMessage) {
    super(Objects.requireNonNull(kubeletMessage, "kubeletMessage"), cause);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.code = Objects.requireNonNull(code, "code");
    this.rpc = Objects.requireNonNull(rpc, "rpc");
    this.description = Objects.requireNonNull(description, "description");
  }

  private static String message(Reason reason, Status.Code code, String rpc, String description) {
    return switch (reason) {
      case NOT_ALLOCATABLE -> "kubelet refused the allocation: " + description;
      case ENDPOINT_STOPPED -> "kubelet failed the call on a stopped endpoint: " + description;
      case RPC_FAILED -> rpc + " failed with " + code + ": " + description;
      case INVALID_RESPONSE -> "invalid " + rpc + " response from the plugin: " + description;
    };
  }

  /**
   * Why it failed.
   *
   * @return the reason
   */
  public Reason reason() {
    return reason;
  }

  /**
   * The gRPC status code (see the constructor).
   *
   * @return the code
   */
  public Status.Code code() {
    return code;
  }

  /**
   * The RPC involved.
   *
   * @return the RPC name, or an empty string when the kubelet refused before any RPC
   */
  public String rpc() {
    return rpc;
  }

  /**
   * What went wrong, without the prefix of {@link #getMessage()}.
   *
   * @return the description (for {@link Reason#RPC_FAILED} the plugin's status description)
   */
  public String description() {
    return description;
  }
}
