package io.github.deviceplugin4j.docs.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Mount;
import org.junit.jupiter.api.Test;

/** The merge rule of writing-a-backend.md: how the default allocation of a container is built. */
class MergeRuleTest {

  @Test
  void theDefaultAllocationMergesTheDevicesAllocations() {
    // tag::merge[]
    Device accel0 =
        Device.builder("accel0")
            .deviceNode(DeviceNode.rw("/dev/accel0"))
            .mount(Mount.readOnly("/opt/accel/firmware"))
            .env("ACCEL_VISIBLE_DEVICES", "accel0")
            .env("ACCEL_DRIVER", "v2")
            .build();
    Device accel1 =
        Device.builder("accel1")
            .deviceNode(DeviceNode.rw("/dev/accel1"))
            .mount(Mount.readOnly("/opt/accel/firmware"))
            .env("ACCEL_VISIBLE_DEVICES", "accel1")
            .env("ACCEL_DRIVER", "v2")
            .build();

    ContainerAllocation both = accel0.allocation().merge(accel1.allocation());

    assertThat(both.deviceNodes())
        .containsExactly(DeviceNode.rw("/dev/accel0"), DeviceNode.rw("/dev/accel1"));
    assertThat(both.mounts()).containsExactly(Mount.readOnly("/opt/accel/firmware"));
    assertThat(both.env())
        .containsEntry("ACCEL_VISIBLE_DEVICES", "accel0,accel1")
        .containsEntry("ACCEL_DRIVER", "v2");
    // end::merge[]
  }
}
