package io.github.deviceplugin4j.docs.backend;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.AllocationPolicies;
import io.github.deviceplugin4j.core.NonBlocking;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import java.nio.file.Path;
import java.util.List;

/** A {@link PreferredAllocator} that delegates to a ready-made policy. */
// tag::preferred[]
public class NumaAccelBackend extends AccelBackend implements PreferredAllocator {

  private final PreferredAllocator policy = AllocationPolicies.numaAligned();

  public NumaAccelBackend(Path root) {
    super(root);
  }

  @NonBlocking // a ready-made policy is pure computation: it may run on the event loop
  @Override
  public List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception {
    return policy.preferredAllocation(request);
  }
}
// end::preferred[]
