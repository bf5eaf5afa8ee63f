package io.github.deviceplugin4j.docs.backend;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Mount;
import java.nio.file.Path;

/** An {@link Allocator} that extends the default allocation with what depends on the whole set. */
// tag::allocator[]
public class ResettingAccelBackend extends AccelBackend implements Allocator {

  public ResettingAccelBackend(Path root) {
    super(root);
  }

  @Override
  public ContainerAllocation allocate(AllocationRequest request) {
    return request.defaultAllocation().toBuilder()
        .env("ACCEL_COUNT", String.valueOf(request.devices().size()))
        .mount(Mount.readOnly("/opt/accel/firmware"))
        .build();
  }
}
// end::allocator[]
