package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * A request names devices that exist but cannot be used now, because they are unhealthy. The
 * kubelet sees {@code FAILED_PRECONDITION}.
 */
public class DeviceUnavailableException extends DevicePluginException {

  private static final long serialVersionUID = 1L;

  /** The device IDs that cannot be used (unhealthy). */
  private final List<String> deviceIds;

  /**
   * Devices that cannot be used.
   *
   * @param message what is wrong, naming the IDs
   * @param deviceIds the unavailable device IDs
   */
  public DeviceUnavailableException(String message, List<String> deviceIds) {
    super(message);
    this.deviceIds = List.copyOf(deviceIds);
  }

  /**
   * The devices that cannot be used.
   *
   * @return the unhealthy device IDs
   */
  public List<String> deviceIds() {
    return deviceIds;
  }
}
