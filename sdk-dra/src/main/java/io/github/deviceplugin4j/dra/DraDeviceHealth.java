package io.github.deviceplugin4j.dra;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The health of one device of a DRA driver.
 *
 * @param poolName the pool that holds the device
 * @param deviceName the device's name in its pool
 * @param status the health
 * @param message optional detail, empty for none; the kubelet keeps at most 1024 characters
 * @param lastUpdated when the driver last determined the status
 * @param healthCheckTimeout how long the kubelet trusts this status without a fresh report; {@link
 *     Duration#ZERO} for the kubelet's default (30 seconds). The host re-sends the last report well
 *     within it
 */
public record DraDeviceHealth(
    String poolName,
    String deviceName,
    DraHealthStatus status,
    String message,
    Instant lastUpdated,
    Duration healthCheckTimeout) {

  /**
   * Checks the report.
   *
   * @param poolName the pool
   * @param deviceName the device
   * @param status the health
   * @param message the detail
   * @param lastUpdated when determined
   * @param healthCheckTimeout the kubelet's timeout for this report
   * @throws IllegalArgumentException when the pool or device is empty, or the timeout is negative
   */
  public DraDeviceHealth {
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(lastUpdated, "lastUpdated");
    Objects.requireNonNull(healthCheckTimeout, "healthCheckTimeout");
    if (poolName.isEmpty() || deviceName.isEmpty()) {
      throw new IllegalArgumentException(
          "device health needs a pool and a device name, got '"
              + poolName
              + "/"
              + deviceName
              + "'");
    }
    if (healthCheckTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "healthCheckTimeout of "
              + poolName
              + "/"
              + deviceName
              + " is negative: use Duration.ZERO for the kubelet's default");
    }
  }

  /**
   * A healthy device, determined now, with the kubelet's default timeout.
   *
   * @param poolName the pool
   * @param deviceName the device
   * @return the report
   */
  public static DraDeviceHealth healthy(String poolName, String deviceName) {
    return new DraDeviceHealth(
        poolName, deviceName, DraHealthStatus.HEALTHY, "", Instant.now(), Duration.ZERO);
  }

  /**
   * An unhealthy device, determined now, with the kubelet's default timeout.
   *
   * @param poolName the pool
   * @param deviceName the device
   * @param message what is wrong
   * @return the report
   */
  public static DraDeviceHealth unhealthy(String poolName, String deviceName, String message) {
    return new DraDeviceHealth(
        poolName, deviceName, DraHealthStatus.UNHEALTHY, message, Instant.now(), Duration.ZERO);
  }
}
