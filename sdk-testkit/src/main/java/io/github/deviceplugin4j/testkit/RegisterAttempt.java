package io.github.deviceplugin4j.testkit;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One {@code Register} call received on {@code kubelet.sock}, accepted or not, with the request's
 * fields as sent.
 *
 * @param at when it arrived
 * @param version {@code RegisterRequest.version}
 * @param endpoint {@code RegisterRequest.endpoint}, as sent (a file name in the plugin directory)
 * @param resourceName {@code RegisterRequest.resource_name}
 * @param optionsSet whether {@code RegisterRequest.options} was set (the kubelet ignores it and
 *     asks {@code GetDevicePluginOptions})
 * @param preStartRequired {@code options.pre_start_required}
 * @param preferredAllocationAvailable {@code options.get_preferred_allocation_available}
 * @param error the error the kubelet answered, empty when it accepted
 */
public record RegisterAttempt(
    Instant at,
    String version,
    String endpoint,
    String resourceName,
    boolean optionsSet,
    boolean preStartRequired,
    boolean preferredAllocationAvailable,
    Optional<String> error) {

  /**
   * Checks the components.
   *
   * @param at see {@link #at()}
   * @param version see {@link #version()}
   * @param endpoint see {@link #endpoint()}
   * @param resourceName see {@link #resourceName()}
   * @param optionsSet see {@link #optionsSet()}
   * @param preStartRequired see {@link #preStartRequired()}
   * @param preferredAllocationAvailable see {@link #preferredAllocationAvailable()}
   * @param error see {@link #error()}
   */
  public RegisterAttempt {
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(error, "error");
  }

  /**
   * Whether the kubelet accepted the registration.
   *
   * @return true when there is no error
   */
  public boolean accepted() {
    return error.isEmpty();
  }
}
