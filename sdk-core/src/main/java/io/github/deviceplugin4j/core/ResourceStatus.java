package io.github.deviceplugin4j.core;

import java.nio.file.Path;
import java.time.Instant;
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
    Path socket) {

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
   */
  public ResourceStatus {
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(lastError, "lastError");
    Objects.requireNonNull(socket, "socket");
  }
}
