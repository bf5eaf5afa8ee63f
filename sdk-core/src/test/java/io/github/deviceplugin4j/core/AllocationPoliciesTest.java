package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AllocationPoliciesTest {

  /** 8 devices: d0-d3 on NUMA 0, d4-d7 on NUMA 1, in kubelet order d0..d7. */
  private static final List<Device> TWO_NODES = devices(0, 0, 0, 0, 1, 1, 1, 1);

  private static List<Device> devices(int... nodes) {
    List<Device> list = new ArrayList<>();
    for (int i = 0; i < nodes.length; i++) {
      Device.Builder b = Device.builder("d" + i);
      if (nodes[i] >= 0) {
        b.numaNode(nodes[i]);
      }
      list.add(b.build());
    }
    return list;
  }

  private static PreferredAllocationRequest request(
      List<Device> available, List<String> must, int size) {
    Map<String, Device> byId =
        available.stream().collect(Collectors.toMap(Device::id, Function.identity()));
    return new PreferredAllocationRequest(
        "example.com/dev", available, must.stream().map(byId::get).toList(), size);
  }

  private static List<String> choose(
      PreferredAllocator policy, List<Device> available, List<String> must, int size)
      throws Exception {
    PreferredAllocationRequest r = request(available, must, size);
    List<String> answer = policy.preferredAllocation(r);
    assertThat(RequestHandler.preferredProblems(r, answer)).as("core check of " + answer).isEmpty();
    return answer;
  }

  @Test
  void numaAligned_fitsOnOneNodeWhenItCan() throws Exception {
    // d1 (node 0) is taken: available d0,d2,d3 on node 0 and d4..d7 on node 1; 4 fit only node 1.
    List<Device> available = new ArrayList<>(TWO_NODES);
    available.remove(1);
    assertThat(choose(AllocationPolicies.numaAligned(), available, List.of(), 4))
        .containsExactly("d4", "d5", "d6", "d7");
    assertThat(choose(AllocationPolicies.numaAligned(), available, List.of(), 3))
        .containsExactly("d0", "d2", "d3");
  }

  @Test
  void numaAligned_staysOnTheMustIncludeNode() throws Exception {
    assertThat(choose(AllocationPolicies.numaAligned(), TWO_NODES, List.of("d6"), 3))
        .containsExactly("d6", "d4", "d5");
  }

  @Test
  void numaAligned_spansAsFewNodesAsPossible() throws Exception {
    // nodes: 0 has 2, 1 has 3, 2 has 3 devices; 6 devices need two nodes: 1 and 2.
    List<Device> available = devices(0, 0, 1, 1, 1, 2, 2, 2);
    List<String> answer = choose(AllocationPolicies.numaAligned(), available, List.of(), 6);
    assertThat(answer).containsExactlyInAnyOrder("d2", "d3", "d4", "d5", "d6", "d7");
  }

  @Test
  void numaAligned_usesDevicesWithoutTopologyLast() throws Exception {
    List<Device> available = devices(-1, 0, 0, 1);
    assertThat(choose(AllocationPolicies.numaAligned(), available, List.of(), 2))
        .containsExactly("d1", "d2");
    assertThat(choose(AllocationPolicies.numaAligned(), available, List.of(), 3))
        .containsExactly("d1", "d2", "d0");
  }

  @Test
  void packed_fillsTheLowestNodeFirstInKubeletOrder() throws Exception {
    List<Device> available = devices(1, 0, 1, 0, 0);
    assertThat(choose(AllocationPolicies.packed(), available, List.of(), 4))
        .containsExactly("d1", "d3", "d4", "d0");
  }

  @Test
  void packed_fillsTheMustIncludeNodeFirst() throws Exception {
    assertThat(choose(AllocationPolicies.packed(), TWO_NODES, List.of("d5"), 4))
        .containsExactly("d5", "d4", "d6", "d7");
  }

  @Test
  void spread_roundRobinsAcrossNodes() throws Exception {
    assertThat(choose(AllocationPolicies.spread(), TWO_NODES, List.of(), 4))
        .containsExactly("d0", "d4", "d1", "d5");
  }

  @Test
  void spread_balancesAgainstMustInclude() throws Exception {
    assertThat(choose(AllocationPolicies.spread(), TWO_NODES, List.of("d0", "d1"), 4))
        .containsExactly("d0", "d1", "d4", "d5");
  }

  @ParameterizedTest
  @ValueSource(strings = {"numaAligned", "packed", "spread"})
  void everyPolicyAlwaysPassesTheCoreCheck(String name) throws Exception {
    PreferredAllocator policy =
        switch (name) {
          case "numaAligned" -> AllocationPolicies.numaAligned();
          case "packed" -> AllocationPolicies.packed();
          default -> AllocationPolicies.spread();
        };
    Random random = new Random(42);
    for (int round = 0; round < 300; round++) {
      int n = 1 + random.nextInt(12);
      int[] nodes = new int[n];
      for (int i = 0; i < n; i++) {
        nodes[i] = random.nextInt(5) - 1; // -1: no topology
      }
      List<Device> available = new ArrayList<>(devices(nodes));
      java.util.Collections.shuffle(available, random);
      int size = 1 + random.nextInt(n);
      List<String> must = new ArrayList<>();
      for (Device d : available) {
        if (must.size() < size && random.nextInt(4) == 0) {
          must.add(d.id());
        }
      }
      // choose() asserts the core check: size, distinct, available, must-include.
      choose(policy, available, must, size);
    }
  }

  @Test
  void numaAligned_neverUsesMoreNodesThanNeeded() throws Exception {
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      int[] nodes = new int[8];
      Arrays.setAll(nodes, i -> random.nextInt(4));
      List<Device> available = devices(nodes);
      int size = 1 + random.nextInt(8);
      List<String> answer = choose(AllocationPolicies.numaAligned(), available, List.of(), size);
      long used =
          available.stream()
              .filter(d -> answer.contains(d.id()))
              .map(d -> d.numaNodes().get(0))
              .distinct()
              .count();
      // the minimum: take the largest nodes first
      Map<Integer, Long> perNode =
          available.stream()
              .collect(Collectors.groupingBy(d -> d.numaNodes().get(0), Collectors.counting()));
      List<Long> counts = new ArrayList<>(perNode.values());
      counts.sort(java.util.Comparator.reverseOrder());
      long covered = 0;
      int minimum = 0;
      while (covered < size) {
        covered += counts.get(minimum++);
      }
      assertThat(used)
          .as("nodes used for %s of %s", size, Arrays.toString(nodes))
          .isEqualTo(minimum);
    }
  }
}
