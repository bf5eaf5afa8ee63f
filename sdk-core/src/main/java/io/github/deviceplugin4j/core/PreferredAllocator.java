package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * Optional capability: a backend that tells the kubelet which devices it prefers. When a backend
 * implements it, the core advertises {@code get_preferred_allocation_available}. Ready-made
 * policies are in {@link AllocationPolicies}.
 *
 * <p>The answer is checked before it is sent: it must hold {@code size} distinct available device
 * IDs including every must-include one.
 */
@FunctionalInterface
public interface PreferredAllocator {

  /**
   * Chooses devices for one container.
   *
   * @param request what the kubelet offers
   * @return the preferred device IDs
   * @throws Exception to fail this call only; the kubelet then chooses on its own
   */
  List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception;
}
