package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * Optional capability: a backend that tells the kubelet which devices it prefers. When a backend
 * implements it, the core advertises {@code get_preferred_allocation_available}. Ready-made
 * policies are in {@link AllocationPolicies}.
 *
 * <p>The answer is checked before it is sent: it must hold {@code size} distinct available device
 * IDs including every must-include one. A failed call (an exception, or an answer that breaks these
 * rules) fails the pod's admission at the kubelet ({@code UnexpectedAdmissionError}), so return a
 * valid choice rather than throw; the {@link AllocationPolicies} never throw.
 */
@FunctionalInterface
public interface PreferredAllocator {

  /**
   * Chooses devices for one container.
   *
   * @param request what the kubelet offers
   * @return the preferred device IDs
   * @throws Exception to fail this call; the kubelet then rejects the pod being admitted
   */
  List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception;
}
