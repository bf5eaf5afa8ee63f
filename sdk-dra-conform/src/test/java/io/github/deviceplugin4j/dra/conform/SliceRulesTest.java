package io.github.deviceplugin4j.dra.conform;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.github.deviceplugin4j.testkit.spi.PublishedSlice;
import org.junit.jupiter.api.Test;

/** The slice-level rules the conformance jar adds to sdk-dra's SliceValidation. */
class SliceRulesTest {

  private static ResourceSliceBuilder valid() {
    return new ResourceSliceBuilder()
        .withNewMetadata()
        .withName("node-1-gpu.example.com-x7k2p")
        .endMetadata()
        .withNewSpec()
        .withDriver("gpu.example.com")
        .withNodeName("node-1")
        .withNewPool()
        .withName("node-1")
        .withGeneration(1L)
        .withResourceSliceCount(1L)
        .endPool()
        .withDevices(
            new DeviceBuilder()
                .withName("gpu-0")
                .withTaints(
                    new DeviceTaintBuilder()
                        .withKey("gpu.example.com/unhealthy")
                        .withValue("ecc")
                        .withEffect("NoSchedule")
                        .build())
                .build())
        .endSpec();
  }

  @Test
  void aSliceAsTheSdkWritesItHasNoProblemAndItsTaintIsReported() {
    ResourceSlice slice = valid().build();

    assertThat(SliceRules.problems(slice)).isEmpty();
    PublishedSlice p = MockDraApiServer.published(slice);
    assertThat(p.nodeSelection()).isEqualTo("nodeName=node-1");
    assertThat(p.devices().get(0).taints())
        .singleElement()
        .hasToString("gpu.example.com/unhealthy=ecc:NoSchedule");
  }

  @Test
  void fieldsTheSdkSetsItselfAreCheckedAsTheApiServerDoes() {
    ResourceSlice slice =
        valid()
            .editSpec()
            .withDriver("GPU")
            .withAllNodes(true)
            .editPool()
            .withName("a//b")
            .withResourceSliceCount(0L)
            .endPool()
            .endSpec()
            .build();

    assertThat(SliceRules.problems(slice))
        .containsExactly(
            "spec.driver 'GPU' must be a DNS subdomain of at most 63 characters",
            "spec.pool.name 'a//b': each part between '/' must be a DNS subdomain, '' is not",
            "spec.pool.resourceSliceCount is 0, it must be greater than zero",
            "exactly one of spec.nodeName, spec.nodeSelector, spec.allNodes and"
                + " spec.perDeviceNodeSelection is required, 2 are set");
  }

  @Test
  void devicesAreCheckedWithSliceValidation() {
    ResourceSlice slice =
        valid()
            .editSpec()
            .editFirstDevice()
            .withTaints(
                new DeviceTaintBuilder()
                    .withKey("gpu.example.com/unhealthy")
                    .withEffect("Sometimes")
                    .build())
            .endDevice()
            .endSpec()
            .build();

    assertThat(SliceRules.problems(slice))
        .singleElement()
        .asString()
        .contains("device 'gpu-0'")
        .contains("effect 'Sometimes'");
  }
}
