package io.github.deviceplugin4j.examples.common;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Logs each device's health changes once: a WARN line with the reason when a device turns (or is
 * first seen) unhealthy, an INFO line when it is healthy again; nothing while it stays as it was.
 * It also remembers which devices it has seen, for a backend that tracks membership.
 *
 * <pre>{@code
 * HealthLog health = new HealthLog(log, "example.com/fpga");
 * health.update(port.name(), port.unhealthyReason()); // for every device of every scan
 * }</pre>
 */
public final class HealthLog {
  private final Logger log;
  private final String subject;
  private final Map<String, Boolean> healthy = new ConcurrentHashMap<>();

  /**
   * A health log.
   *
   * @param log where to log
   * @param subject what each line is about, e.g. the resource name
   */
  public HealthLog(Logger log, String subject) {
    this.log = log;
    this.subject = subject;
  }

  /**
   * Records a device's health from a scan and logs it if it changed.
   *
   * @param device the device's name or ID
   * @param unhealthyReason why it is unhealthy; empty when it is healthy
   */
  public void update(String device, Optional<String> unhealthyReason) {
    Boolean was = healthy.put(device, unhealthyReason.isEmpty());
    if (unhealthyReason.isPresent() && !Boolean.FALSE.equals(was)) {
      log.warn("{}: {} is unhealthy: {}", subject, device, unhealthyReason.get());
    } else if (unhealthyReason.isEmpty() && Boolean.FALSE.equals(was)) {
      log.info("{}: {} is healthy again", subject, device);
    }
  }

  /**
   * Whether a device was recorded and not forgotten since.
   *
   * @param device the device's name or ID
   * @return true when known
   */
  public boolean knows(String device) {
    return healthy.containsKey(device);
  }

  /**
   * Forgets a device, e.g. when it leaves the resource; it is "first seen" again if it comes back.
   *
   * @param device the device's name or ID
   * @return whether it was known
   */
  public boolean forget(String device) {
    return healthy.remove(device) != null;
  }
}
