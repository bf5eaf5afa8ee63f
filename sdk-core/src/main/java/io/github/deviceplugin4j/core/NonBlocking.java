package io.github.deviceplugin4j.core;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;

/**
 * Declares that a backend's capability never blocks, so the core may call it on the gRPC event loop
 * instead of handing the call to a worker thread (which costs about a tenth of a millisecond per
 * call). Put it on the method that implements the capability ({@link Allocator#allocate}, {@link
 * PreferredAllocator#preferredAllocation}, {@link PreStartHook#preStart(List)} or {@link
 * PreStartHook#preStart(PreStartRequest)}), or on the backend class for all of them.
 *
 * <pre>{@code
 * class GpuBackend implements DeviceBackend, PreferredAllocator {
 *   private final PreferredAllocator policy = AllocationPolicies.numaAligned();
 *
 *   @NonBlocking // a built-in policy: pure computation, no I/O
 *   public List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception {
 *     return policy.preferredAllocation(request);
 *   }
 * }
 * }</pre>
 *
 * <p>Only declare what is true: a declared method runs without a deadline, and while it runs no
 * other call of any resource of the host is served (one event loop thread serves them all). It must
 * not do I/O, take locks that other threads hold for long, or sleep. Without the annotation every
 * capability runs on a worker thread with its deadline, and a backend that hangs never stalls
 * anything else.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface NonBlocking {}
