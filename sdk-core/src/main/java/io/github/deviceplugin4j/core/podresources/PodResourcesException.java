package io.github.deviceplugin4j.core.podresources;

import io.github.deviceplugin4j.core.DevicePluginException;

/** A PodResources call failed: the kubelet is unreachable, refused, or rate-limited the call. */
public class PodResourcesException extends DevicePluginException {

  private static final long serialVersionUID = 1L;

  /** The gRPC status code name of the failure, e.g. {@code "UNAVAILABLE"}. */
  private final String code;

  /**
   * A failed call.
   *
   * @param message what failed and what to do
   * @param code the gRPC status code name, e.g. {@code "UNAVAILABLE"}
   * @param cause the underlying failure
   */
  public PodResourcesException(String message, String code, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /**
   * The gRPC status code of the failure.
   *
   * @return e.g. {@code "UNAVAILABLE"}, {@code "RESOURCE_EXHAUSTED"} (rate limit)
   */
  public String code() {
    return code;
  }
}
