package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * The kubelet refused the registration: no API version both sides speak, an invalid resource name,
 * or another rejection. Reported through {@link PluginListener#onError} and {@link
 * ResourceStatus#lastError()}; the core keeps retrying with backoff.
 */
public class RegistrationException extends DevicePluginException {

  private static final long serialVersionUID = 1L;

  /** API versions the kubelet said it supports; empty when unknown. */
  private final List<String> kubeletVersions;

  /** API versions this SDK offered, in preference order. */
  private final List<String> sdkVersions;

  /**
   * A refused registration.
   *
   * @param message what the kubelet said and what to do
   * @param kubeletVersions API versions the kubelet said it supports; empty when unknown
   * @param sdkVersions API versions this SDK offered
   */
  public RegistrationException(
      String message, List<String> kubeletVersions, List<String> sdkVersions) {
    super(message);
    this.kubeletVersions = List.copyOf(kubeletVersions);
    this.sdkVersions = List.copyOf(sdkVersions);
  }

  /**
   * API versions the kubelet supports, as far as its answer told.
   *
   * @return kubelet versions, empty when unknown
   */
  public List<String> kubeletVersions() {
    return kubeletVersions;
  }

  /**
   * API versions this SDK offered.
   *
   * @return SDK versions in preference order
   */
  public List<String> sdkVersions() {
    return sdkVersions;
  }
}
