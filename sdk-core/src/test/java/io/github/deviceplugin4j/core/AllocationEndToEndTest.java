package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.PodRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Allocation as the kubelet does it: preferred allocation, Allocate, PreStartContainer. */
class AllocationEndToEndTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/gpu";

  @TempDir Path dir;

  /** Eight GPUs on two NUMA nodes, preferring NUMA-aligned sets, resetting before start. */
  static final class GpuBackend implements DeviceBackend, PreferredAllocator, PreStartHook {
    final List<String> preStarted = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final PreferredAllocator policy;

    GpuBackend(PreferredAllocator policy) {
      this.policy = policy;
    }

    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return java.util.stream.IntStream.range(0, 8)
          .mapToObj(
              i ->
                  Device.builder("gpu" + i)
                      .numaNode(i < 4 ? 0 : 1)
                      .deviceNode(DeviceNode.rw("/dev/gpu" + i))
                      .env("GPUS", String.valueOf(i))
                      .build())
          .toList();
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception {
      return policy.preferredAllocation(request);
    }

    @Override
    public void preStart(List<Device> devices) {
      preStarted.add(devices.stream().map(Device::id).toList().toString());
    }
  }

  private DevicePluginHost host(DeviceBackend backend) {
    return DevicePluginHost.builder()
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(backend)
        .start();
  }

  @Test
  void numaAlignedPolicyKeepsAPodOnOneNode() {
    GpuBackend backend = new GpuBackend(AllocationPolicies.numaAligned());
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 8, WAIT);
      Allocation first = kubelet.allocate(RESOURCE, "gpu0"); // one taken on node 0
      Allocation second = kubelet.allocate(RESOURCE, 4); // must go to node 1 to stay aligned
      assertThat(second.deviceIds()).containsExactlyInAnyOrder("gpu4", "gpu5", "gpu6", "gpu7");
      assertThat(second.envs()).containsEntry("GPUS", String.join(",", suffixes(second)));
      assertThat(backend.preStarted).hasSize(2);
      Allocation third = kubelet.allocate(RESOURCE, 3);
      assertThat(third.deviceIds()).containsExactlyInAnyOrder("gpu1", "gpu2", "gpu3");
      assertThat(first.devices()).hasSize(1);
      // The kubelet may call before the plugin has read the answer to its Register.
      await().atMost(WAIT).until(host::isReady);
    }
  }

  private static List<String> suffixes(Allocation a) {
    return a.deviceIds().stream().map(id -> id.substring(3)).toList();
  }

  @Test
  void packedAndSpreadPoliciesWorkThroughTheKubelet() {
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(new GpuBackend(AllocationPolicies.spread()))) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 8, WAIT);
      Allocation spread = kubelet.allocate(RESOURCE, 2);
      // One device from each NUMA node (gpu0-3 on node 0, gpu4-7 on node 1). Which ones depends
      // on the order of available_deviceIDs, which the kubelet (and the fake) leave undefined.
      assertThat(spread.deviceIds())
          .hasSize(2)
          .anyMatch(id -> List.of("gpu0", "gpu1", "gpu2", "gpu3").contains(id))
          .anyMatch(id -> List.of("gpu4", "gpu5", "gpu6", "gpu7").contains(id));
    }
  }

  @Test
  void aPolicyThatBreaksTheRulesIsReplacedByAValidChoiceAndThePodIsAdmitted() {
    GpuBackend backend = new GpuBackend(r -> r.availableIds().subList(0, 1));
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = host(backend)) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 8, WAIT);
      // An error status would fail the pod's admission; the core answers a valid fallback
      // instead: the plugin's own order, whatever order the kubelet sent.
      Allocation a = kubelet.allocate(PodRequest.count(RESOURCE, 2));
      assertThat(a.deviceIds()).containsExactlyInAnyOrder("gpu0", "gpu1");
    }
  }
}
