package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import io.github.deviceplugin4j.core.internal.state.Validation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link Sharing}'s values, replica IDs and the replica policies of {@link AllocationPolicies}. */
class SharingTest {

  /** Replicas in kubelet order: the given IDs, each a replica {@code <device>::<k>}. */
  private static List<Device> replicas(String... ids) {
    List<Device> list = new ArrayList<>();
    for (String id : ids) {
      list.add(Device.healthy(id));
    }
    return list;
  }

  private static List<String> choose(
      PreferredAllocator policy, List<Device> available, List<String> must, int size)
      throws Exception {
    Map<String, Device> byId =
        available.stream().collect(Collectors.toMap(Device::id, Function.identity()));
    PreferredAllocationRequest r =
        new PreferredAllocationRequest(
            "example.com/dev", available, must.stream().map(byId::get).toList(), size);
    List<String> answer = policy.preferredAllocation(r);
    assertThat(RequestHandler.preferredProblems(r, answer)).as("core check of " + answer).isEmpty();
    return answer;
  }

  @Test
  void replicaIdsMapBackToTheirDevice() {
    assertThat(Sharing.replicaId("ttyUSB0", 3)).isEqualTo("ttyUSB0::3");
    assertThat(Sharing.deviceId("ttyUSB0::3")).isEqualTo("ttyUSB0");
    assertThat(Sharing.deviceId("GPU-a::b::12")).isEqualTo("GPU-a::b");
    assertThat(Sharing.deviceId("a:::0")).isEqualTo("a:");
    assertThat(Sharing.deviceId("plain")).isEqualTo("plain");
    assertThat(Sharing.deviceId("x::")).isEqualTo("x::");
    assertThat(Sharing.deviceId("x::y")).isEqualTo("x::y");
  }

  @Test
  void optionsComposeAndRenameAddsShared() {
    Sharing s = Sharing.replicas(4).renamed().oneReplicaPerContainer().packed();
    assertThat(s.replicas()).isEqualTo(4);
    assertThat(s.isShared()).isTrue();
    assertThat(s.isRenamed()).isTrue();
    assertThat(s.isOneReplicaPerContainer()).isTrue();
    assertThat(s.isPacked()).isTrue();
    assertThat(s.resourceName("example.com/gpu")).isEqualTo("example.com/gpu.shared");
    assertThat(Sharing.replicas(4).resourceName("example.com/gpu")).isEqualTo("example.com/gpu");
    assertThat(Sharing.replicas(1).isShared()).isFalse();
    assertThat(Sharing.none()).isEqualTo(Sharing.replicas(1));
  }

  @Test
  void replicasOutOfRangeAreRefusedWithTheRange() {
    assertThatThrownBy(() -> Sharing.replicas(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("replicas must be between 1 and 1000, was 0");
    assertThatThrownBy(() -> Sharing.replicas(1001)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDeviceWhoseReplicaIdsWouldBeTooLongIsDroppedWithWhatToDo() {
    String tooLong = "d".repeat(61);
    Validation.DeviceCheck check =
        Validation.checkReplicaIds(
            List.of(Device.healthy(tooLong), Device.healthy("ok")), Sharing.replicas(10));
    assertThat(check.accepted()).extracting(Device::id).containsExactly("ok");
    assertThat(check.problems())
        .singleElement()
        .asString()
        .contains(tooLong + "::9")
        .contains("keep device IDs under 61 characters or share fewer times");
    assertThat(
            Validation.checkReplicaIds(List.of(Device.healthy(tooLong)), Sharing.none()).problems())
        .isEmpty();
  }

  @Test
  void spreadTakesReplicasOfDifferentDevicesFirst() throws Exception {
    List<Device> available = replicas("a::0", "a::1", "a::2", "b::0", "b::1", "c::0");
    assertThat(choose(AllocationPolicies.replicasSpread(), available, List.of(), 3))
        .extracting(Sharing::deviceId)
        .containsExactlyInAnyOrder("a", "b", "c");
    // With a::0 included, the next ones come from other devices.
    assertThat(choose(AllocationPolicies.replicasSpread(), available, List.of("a::0"), 2))
        .containsExactly("a::0", "b::0");
  }

  @Test
  void spreadPrefersTheLeastUsedDevice() throws Exception {
    // a has one replica free (two in use elsewhere), b three: b is the least used.
    List<Device> available = replicas("a::2", "b::0", "b::1", "b::2");
    assertThat(choose(AllocationPolicies.replicasSpread(), available, List.of(), 1))
        .containsExactly("b::0");
  }

  @Test
  void packFillsTheMostUsedDeviceFirst() throws Exception {
    List<Device> available = replicas("a::0", "a::1", "a::2", "b::1", "b::2");
    assertThat(choose(AllocationPolicies.replicasPacked(), available, List.of(), 2))
        .containsExactly("b::1", "b::2");
    assertThat(choose(AllocationPolicies.replicasPacked(), available, List.of("a::1"), 3))
        .containsExactly("a::1", "a::0", "a::2");
  }
}
