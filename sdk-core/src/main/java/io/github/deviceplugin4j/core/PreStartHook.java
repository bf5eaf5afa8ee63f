package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * Optional capability: work to do before each container that uses the devices starts (reset,
 * firmware check). When a backend implements it, the core advertises {@code pre_start_required},
 * and the kubelet waits up to 30 seconds for it (the core's deadline, {@code preStartDeadline},
 * defaults to the same).
 *
 * <p>The kubelet calls it before <em>every</em> start of the container, including crash-loop
 * restarts and restarts after a kubelet or plugin restart, possibly long after Allocate, and never
 * checks health first. The core refuses only malformed IDs; devices that turned unhealthy, and IDs
 * the plugin no longer advertises, reach the hook. A refusal stops the container from starting (the
 * kubelet retries with back-off and cannot pick other devices), so refuse only what really cannot
 * work.
 *
 * <p>Implement {@link #preStart(List)} for the known devices only, or override {@link
 * #preStart(PreStartRequest)} to see unknown IDs as well:
 *
 * <pre>{@code
 * @Override
 * public void preStart(PreStartRequest request) throws Exception {
 *   for (Device d : request.devices()) {
 *     reset(d);
 *   }
 * }
 *
 * @Override
 * public void preStart(List<Device> devices) {
 *   throw new AssertionError("not called: preStart(PreStartRequest) is overridden");
 * }
 * }</pre>
 *
 * <p>Runs on a worker thread with its deadline, unless declared {@link NonBlocking}.
 */
@FunctionalInterface
public interface PreStartHook {

  /**
   * Prepares the known devices of a container that is about to start. Called by the default {@link
   * #preStart(PreStartRequest)}.
   *
   * @param devices the container's devices the plugin advertises, each with its current health
   *     (unhealthy ones included); IDs the plugin no longer advertises are left out
   * @throws Exception to fail the container start with a clear error
   */
  void preStart(List<Device> devices) throws Exception;

  /**
   * Prepares the devices of a container that is about to start. The default calls {@link
   * #preStart(List)} with the known devices, so unknown IDs are let through.
   *
   * @param request the known devices with their health, and the unknown IDs
   * @throws Exception to fail the container start with a clear error
   */
  default void preStart(PreStartRequest request) throws Exception {
    preStart(request.devices());
  }
}
