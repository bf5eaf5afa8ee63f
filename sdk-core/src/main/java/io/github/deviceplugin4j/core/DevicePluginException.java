package io.github.deviceplugin4j.core;

/**
 * The root of every exception deviceplugin4j throws or reports. Unchecked.
 *
 * <p>Subclasses carry the fields a caller needs to act, and the core maps them to gRPC status codes
 * when they end a kubelet call: a backend may throw any subclass itself to choose the code the
 * kubelet sees.
 *
 * <table>
 *   <caption>How the core maps exceptions to gRPC status codes</caption>
 *   <tr><th>Exception</th><th>Status code</th></tr>
 *   <tr><td>{@link InvalidRequestException}</td><td>{@code INVALID_ARGUMENT}</td></tr>
 *   <tr><td>{@link DeviceUnavailableException}</td><td>{@code FAILED_PRECONDITION}</td></tr>
 *   <tr><td>{@link BackendException} (timed out)</td><td>{@code DEADLINE_EXCEEDED}</td></tr>
 *   <tr><td>{@link BackendException}, {@link InvalidBackendDataException}, any other</td>
 *       <td>{@code INTERNAL}</td></tr>
 * </table>
 */
public class DevicePluginException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * An exception with a message a person can act on.
   *
   * @param message what is wrong and, where possible, what to do
   */
  public DevicePluginException(String message) {
    super(message);
  }

  /**
   * An exception with a message and a cause.
   *
   * @param message what is wrong and, where possible, what to do
   * @param cause the underlying failure
   */
  public DevicePluginException(String message, Throwable cause) {
    super(message, cause);
  }
}
