package io.github.deviceplugin4j.core;

/**
 * The plugin cannot start as configured: an invalid resource name, a missing or read-only plugin
 * directory, a socket path over the Unix limit, a socket another live instance is serving, and so
 * on. Thrown by {@link DevicePluginHost.Builder#start()} and by {@link
 * ResourceNames#check(String)}.
 */
public class ConfigurationException extends DevicePluginException {

  private static final long serialVersionUID = 1L;

  /**
   * A configuration problem.
   *
   * @param message what is wrong and what to do
   */
  public ConfigurationException(String message) {
    super(message);
  }

  /**
   * A configuration problem with a cause.
   *
   * @param message what is wrong and what to do
   * @param cause the underlying failure
   */
  public ConfigurationException(String message, Throwable cause) {
    super(message, cause);
  }
}
