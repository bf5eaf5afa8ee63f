package io.github.deviceplugin4j.testkit;

import java.time.Instant;
import java.util.Objects;

/**
 * The health of one device as a DRA driver last reported it on {@code NodeWatchResources}.
 *
 * @param driver the driver name
 * @param poolName the device's pool
 * @param deviceName the device's name in the pool
 * @param status the reported status
 * @param message the driver's message (may be empty)
 * @param lastUpdatedTime the driver's {@code last_updated_time} (Unix seconds)
 * @param healthCheckTimeoutSeconds the driver's {@code health_check_timeout_seconds} (0: the
 *     kubelet's default)
 * @param receivedAt when the fake received it
 */
public record DraDeviceHealth(
    String driver,
    String poolName,
    String deviceName,
    Status status,
    String message,
    long lastUpdatedTime,
    long healthCheckTimeoutSeconds,
    Instant receivedAt) {

  /** The DRA health API's {@code HealthStatus}. */
  public enum Status {
    /** The driver does not know. */
    UNKNOWN,
    /** The device works. */
    HEALTHY,
    /** The device does not work. */
    UNHEALTHY
  }

  /**
   * Checks the components.
   *
   * @param driver see {@link #driver()}
   * @param poolName see {@link #poolName()}
   * @param deviceName see {@link #deviceName()}
   * @param status see {@link #status()}
   * @param message see {@link #message()}
   * @param lastUpdatedTime see {@link #lastUpdatedTime()}
   * @param healthCheckTimeoutSeconds see {@link #healthCheckTimeoutSeconds()}
   * @param receivedAt see {@link #receivedAt()}
   */
  public DraDeviceHealth {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(receivedAt, "receivedAt");
  }
}
