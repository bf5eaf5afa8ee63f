package io.github.deviceplugin4j.core.internal.requests;

import java.time.Duration;
import java.util.Objects;

/**
 * Deadlines of the backend calls on the kubelet's request path, one per RPC. Why the defaults are
 * what they are: see the builder's {@code allocateDeadline}, {@code preferredAllocationDeadline}
 * and {@code preStartDeadline} ({@link io.github.deviceplugin4j.core.DevicePluginHost.Builder}).
 *
 * @param allocate deadline of an {@code Allocator} call
 * @param preferred deadline of a {@code PreferredAllocator} call; when it passes, the kubelet gets
 *     a fallback choice
 * @param preStart deadline of a {@code PreStartHook} call
 */
public record RequestDeadlines(Duration allocate, Duration preferred, Duration preStart) {

  /** Default deadline of Allocate. */
  public static final Duration DEFAULT_ALLOCATE = Duration.ofSeconds(60);

  /** Default deadline of GetPreferredAllocation. */
  public static final Duration DEFAULT_PREFERRED = Duration.ofSeconds(10);

  /** Default deadline of PreStartContainer: the kubelet's own. */
  public static final Duration DEFAULT_PRE_START = Duration.ofSeconds(30);

  /** The defaults. */
  public static final RequestDeadlines DEFAULTS =
      new RequestDeadlines(DEFAULT_ALLOCATE, DEFAULT_PREFERRED, DEFAULT_PRE_START);

  /** Checks for nulls. */
  public RequestDeadlines {
    Objects.requireNonNull(allocate, "allocate");
    Objects.requireNonNull(preferred, "preferred");
    Objects.requireNonNull(preStart, "preStart");
  }
}
