package io.github.deviceplugin4j.examples.common;

import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * The {@code metrics-address} setting of the example plugins: where the HTTP endpoint with {@code
 * /metrics}, {@code /healthz} and {@code /readyz} listens. Written {@code :9400} (every interface),
 * {@code 127.0.0.1:9400} or {@code [::1]:9400}; empty turns the endpoint off. Its default comes
 * from the environment variable {@code METRICS_ADDRESS} (the example images set {@code :9400}), so
 * a plain {@code java -jar} run serves no HTTP unless asked to. The option itself is {@link
 * MetricsAddressOption}.
 *
 * <pre>{@code
 * Optional<InetSocketAddress> metrics = MetricsAddress.parse(":9400");
 * }</pre>
 */
public final class MetricsAddress {
  /** The setting's key: {@code --metrics-address}. */
  public static final String KEY = "metrics-address";

  /** The environment variable every example reads the default from. */
  public static final String ENV = "METRICS_ADDRESS";

  private MetricsAddress() {}

  /**
   * Reads an address.
   *
   * @param value {@code [host]:port}, or empty for none
   * @return the address (unresolved host names are resolved now), or empty when the value is
   * @throws IllegalArgumentException naming the setting and the value when it is no address
   */
  public static Optional<InetSocketAddress> parse(String value) {
    String v = value == null ? "" : value.trim();
    if (v.isEmpty()) {
      return Optional.empty();
    }
    int colon = v.lastIndexOf(':');
    String host = colon < 0 ? "" : v.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(v.substring(colon + 1));
    } catch (NumberFormatException e) {
      port = -1;
    }
    if (colon < 0 || port < 0 || port > 65535 || (host.contains(":") && !v.startsWith("["))) {
      throw new IllegalArgumentException(
          KEY
              + " must be [host]:port such as :9400, 127.0.0.1:9400 or [::1]:9400 (empty for no"
              + " HTTP endpoint), was '"
              + value
              + "'");
    }
    return Optional.of(
        host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port));
  }
}
