package io.github.deviceplugin4j.core;

/**
 * Optional capability: a backend that computes a container's allocation itself, e.g. to reset a
 * device or to add a variable that depends on the whole set.
 *
 * <p>Called only with validated requests. The answer is validated before it reaches the kubelet. To
 * fall back to the default, return {@link AllocationRequest#defaultAllocation()}, possibly extended
 * through {@link ContainerAllocation#toBuilder()}.
 */
@FunctionalInterface
public interface Allocator {

  /**
   * Computes the allocation of one container.
   *
   * @param request the validated request
   * @return what the container needs
   * @throws Exception to fail this allocation only; the kubelet sees a clear error
   */
  ContainerAllocation allocate(AllocationRequest request) throws Exception;
}
