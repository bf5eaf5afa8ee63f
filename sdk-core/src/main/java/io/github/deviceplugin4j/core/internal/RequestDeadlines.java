package io.github.deviceplugin4j.core.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * Deadlines of the backend calls on the kubelet's request path, one per RPC.
 *
 * <p>The defaults never cut a call the kubelet would still wait for, or only where cutting it is
 * better for the node than waiting: the kubelet gives PreStartContainer 30 s; it sets no deadline
 * on Allocate or GetPreferredAllocation, but it admits pods one at a time, so a backend that hangs
 * there stalls every pod on the node. Allocate therefore gets a generous minute; a
 * GetPreferredAllocation that passes its deadline is answered with a valid fallback choice, never
 * an error, so a shorter bound costs no pod.
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

  /**
   * Checks for nulls.
   *
   * @param allocate see {@link #allocate()}
   * @param preferred see {@link #preferred()}
   * @param preStart see {@link #preStart()}
   */
  public RequestDeadlines {
    Objects.requireNonNull(allocate, "allocate");
    Objects.requireNonNull(preferred, "preferred");
    Objects.requireNonNull(preStart, "preStart");
  }
}
