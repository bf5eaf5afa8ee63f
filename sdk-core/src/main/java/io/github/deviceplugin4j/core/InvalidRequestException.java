package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * A kubelet request that cannot be served as asked: unknown or duplicate device IDs, an empty
 * request, a preferred-allocation size that does not fit. The kubelet sees {@code
 * INVALID_ARGUMENT}.
 */
public class InvalidRequestException extends DevicePluginException {

  private static final long serialVersionUID = 1L;

  /** The device IDs that made the request invalid; may be empty. */
  private final List<String> deviceIds;

  /**
   * An invalid request.
   *
   * @param message what is wrong, naming the IDs
   * @param deviceIds the offending device IDs; may be empty
   */
  public InvalidRequestException(String message, List<String> deviceIds) {
    super(message);
    this.deviceIds = List.copyOf(deviceIds);
  }

  /**
   * The device IDs that made the request invalid.
   *
   * @return offending IDs, possibly empty
   */
  public List<String> deviceIds() {
    return deviceIds;
  }
}
