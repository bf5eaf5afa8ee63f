package io.github.deviceplugin4j.core;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A snapshot of one resource's state, from {@link DevicePluginHost#status(String)}.
 *
 * @param resourceName the resource
 * @param registered whether the kubelet currently has the resource registered (as far as the plugin
 *     can tell)
 * @param mode the effective registration mode: {@link RegistrationMode#LEGACY} or {@link
 *     RegistrationMode#PLUGIN_WATCHER}, never {@code AUTO}
 * @param registrations successful registrations since start
 * @param lastRegistered when the last registration succeeded; null if never
 * @param lastError the most recent error reported for this resource (not cleared by later success),
 *     if any
 * @param totalDevices devices the kubelet sees
 * @param healthyDevices healthy devices the kubelet sees
 * @param socket the socket the DevicePlugin service is served on
 * @param unhealthyReasons every unhealthy device the kubelet sees, by ID, in the backend's order,
 *     with the reason the backend gave ({@link Device#unhealthyReason()}; empty when none). The
 *     kubelet API has no field for reasons: only this status and the logs show them
 */
public record ResourceStatus(
    String resourceName,
    boolean registered,
    RegistrationMode mode,
    int registrations,
    Instant lastRegistered,
    Optional<String> lastError,
    int totalDevices,
    int healthyDevices,
    Path socket,
    Map<String, String> unhealthyReasons) {

  /**
   * Checks for nulls where a value is required.
   *
   * @param resourceName see {@link #resourceName()}
   * @param registered see {@link #registered()}
   * @param mode see {@link #mode()}
   * @param registrations see {@link #registrations()}
   * @param lastRegistered see {@link #lastRegistered()}
   * @param lastError see {@link #lastError()}
   * @param totalDevices see {@link #totalDevices()}
   * @param healthyDevices see {@link #healthyDevices()}
   * @param socket see {@link #socket()}
   * @param unhealthyReasons see {@link #unhealthyReasons()}
   */
  public ResourceStatus {
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(lastError, "lastError");
    Objects.requireNonNull(socket, "socket");
    unhealthyReasons =
        unhealthyReasons == null
            ? Map.of()
            : Collections.unmodifiableMap(new LinkedHashMap<>(unhealthyReasons));
  }

  /**
   * A status without unhealthy reasons.
   *
   * @param resourceName see {@link #resourceName()}
   * @param registered see {@link #registered()}
   * @param mode see {@link #mode()}
   * @param registrations see {@link #registrations()}
   * @param lastRegistered see {@link #lastRegistered()}
   * @param lastError see {@link #lastError()}
   * @param totalDevices see {@link #totalDevices()}
   * @param healthyDevices see {@link #healthyDevices()}
   * @param socket see {@link #socket()}
   */
  public ResourceStatus(
      String resourceName,
      boolean registered,
      RegistrationMode mode,
      int registrations,
      Instant lastRegistered,
      Optional<String> lastError,
      int totalDevices,
      int healthyDevices,
      Path socket) {
    this(
        resourceName,
        registered,
        mode,
        registrations,
        lastRegistered,
        lastError,
        totalDevices,
        healthyDevices,
        socket,
        Map.of());
  }
}
