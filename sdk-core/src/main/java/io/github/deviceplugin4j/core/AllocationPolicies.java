package io.github.deviceplugin4j.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Ready-made preferred-allocation policies. Each is a {@link PreferredAllocator} a backend
 * delegates to; each keeps every must-include device, answers exactly the requested size from the
 * available devices, and its answer is checked by the core before it reaches the kubelet.
 *
 * <pre>{@code
 * class GpuBackend implements DeviceBackend, PreferredAllocator {
 *   private final PreferredAllocator policy = AllocationPolicies.numaAligned();
 *   public List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception {
 *     return policy.preferredAllocation(request);
 *   }
 *   // resourceName(), devices() ...
 * }
 * }</pre>
 *
 * <p>Devices without NUMA information count as attached to no node: they never add a node to an
 * answer, and policies use them after devices with topology.
 */
public final class AllocationPolicies {

  private static final int NO_NODE = Integer.MAX_VALUE;
  private static final int MAX_EXACT_NODES = 16;

  private AllocationPolicies() {}

  /**
   * Spans as few NUMA nodes as possible; among equally small choices, prefers fewer devices without
   * topology, then devices earlier in the kubelet's order.
   *
   * @return the policy
   */
  public static PreferredAllocator numaAligned() {
    return AllocationPolicies::numaAlignedChoice;
  }

  /**
   * Fills one NUMA node before the next: first the nodes of the must-include devices, then nodes in
   * ascending ID order; within a node, devices in the kubelet's order.
   *
   * @return the policy
   */
  public static PreferredAllocator packed() {
    return AllocationPolicies::packedChoice;
  }

  /**
   * Spreads devices round-robin across NUMA nodes: each next device comes from the node with the
   * fewest chosen devices so far (ties: lowest node ID); within a node, devices in the kubelet's
   * order.
   *
   * @return the policy
   */
  public static PreferredAllocator spread() {
    return AllocationPolicies::spreadChoice;
  }

  /**
   * For a shared resource ({@link Sharing}): spreads a container's replicas over as many physical
   * devices as it can, each next replica from the device with the fewest replicas in the answer so
   * far; among those, the device with the most replicas still free on the node (the least used),
   * then the kubelet's order. The default of a shared resource.
   *
   * @return the policy
   */
  public static PreferredAllocator replicasSpread() {
    return new ReplicaChoice(false);
  }

  /**
   * For a shared resource ({@link Sharing#packed()}): fills one physical device's replicas before
   * the next, starting with the device with the fewest replicas still free on the node (the most
   * used one), then the kubelet's order, so that whole devices stay free for others.
   *
   * @return the policy
   */
  public static PreferredAllocator replicasPacked() {
    return new ReplicaChoice(true);
  }

  /** Chooses replicas by their physical device ({@link Sharing#deviceId(String)}). */
  @NonBlocking
  private static final class ReplicaChoice implements PreferredAllocator {
    private final boolean pack;

    ReplicaChoice(boolean pack) {
      this.pack = pack;
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) {
      Choice choice = new Choice(request);
      Map<String, Integer> chosen = new HashMap<>();
      Map<String, Integer> free = new HashMap<>();
      choice.chosen.forEach(d -> chosen.merge(Sharing.deviceId(d.id()), 1, Integer::sum));
      choice.candidates.forEach(d -> free.merge(Sharing.deviceId(d.id()), 1, Integer::sum));
      List<Device> left = new ArrayList<>(choice.candidates);
      for (int needed = choice.needed(); needed > 0 && !left.isEmpty(); needed--) {
        Device best = null;
        for (Device d : left) {
          if (best == null || better(d, best, chosen, free)) {
            best = d;
          }
        }
        left.remove(best);
        String device = Sharing.deviceId(best.id());
        chosen.merge(device, 1, Integer::sum);
        free.merge(device, -1, Integer::sum);
        choice.chosen.add(best);
      }
      return choice.result();
    }

    /** Whether {@code a} goes before {@code b}; equal ones keep the kubelet's order. */
    private boolean better(
        Device a, Device b, Map<String, Integer> chosen, Map<String, Integer> free) {
      String da = Sharing.deviceId(a.id());
      String db = Sharing.deviceId(b.id());
      int ca = chosen.getOrDefault(da, 0);
      int cb = chosen.getOrDefault(db, 0);
      if (ca != cb) {
        return pack ? ca > cb : ca < cb;
      }
      int fa = free.getOrDefault(da, 0);
      int fb = free.getOrDefault(db, 0);
      return pack ? fa < fb : fa > fb;
    }
  }

  private static List<String> numaAlignedChoice(PreferredAllocationRequest request) {
    Choice choice = new Choice(request);
    int needed = choice.needed();
    if (needed == 0) {
      return choice.result();
    }
    Set<Integer> base = new TreeSet<>();
    choice.chosen.forEach(d -> base.addAll(d.numaNodes()));
    TreeSet<Integer> others = new TreeSet<>();
    choice.candidates.forEach(d -> others.addAll(d.numaNodes()));
    others.removeAll(base);
    List<Integer> extra = new ArrayList<>(others);

    List<Device> best = null;
    if (extra.size() <= MAX_EXACT_NODES) {
      // Smallest number of additional nodes first; among those, earliest devices in kubelet order.
      for (int size = 0; size <= extra.size() && best == null; size++) {
        for (Set<Integer> subset : subsets(extra, size)) {
          Set<Integer> allowed = new TreeSet<>(base);
          allowed.addAll(subset);
          List<Device> pick = pickWithin(choice.candidates, allowed, needed);
          if (pick != null && (best == null || earlier(choice, pick, best))) {
            best = pick;
          }
        }
      }
    } else {
      // Greedy for very large machines: add the node offering the most devices until it fits.
      Set<Integer> allowed = new TreeSet<>(base);
      List<Integer> remaining = new ArrayList<>(extra);
      while ((best = pickWithin(choice.candidates, allowed, needed)) == null
          && !remaining.isEmpty()) {
        Integer next =
            remaining.stream()
                .max(
                    Comparator.<Integer>comparingLong(
                            n ->
                                choice.candidates.stream()
                                    .filter(d -> d.numaNodes().contains(n))
                                    .count())
                        .thenComparing(Comparator.reverseOrder()))
                .orElseThrow();
        allowed.add(next);
        remaining.remove(next);
      }
    }
    if (best == null) {
      best = choice.candidates.subList(0, Math.min(needed, choice.candidates.size()));
    }
    choice.chosen.addAll(best);
    return choice.result();
  }

  /** The first {@code needed} candidates within the allowed nodes, topology-less ones last. */
  private static List<Device> pickWithin(
      List<Device> candidates, Set<Integer> allowed, int needed) {
    List<Device> pick = new ArrayList<>(needed);
    for (boolean withTopology : new boolean[] {true, false}) {
      for (Device d : candidates) {
        if (pick.size() == needed) {
          break;
        }
        boolean none = d.numaNodes().isEmpty();
        if (withTopology ? !none && allowed.containsAll(d.numaNodes()) : none) {
          pick.add(d);
        }
      }
    }
    return pick.size() == needed ? pick : null;
  }

  /** Fewer devices without topology first, then earlier in the kubelet's order. */
  private static boolean earlier(Choice choice, List<Device> a, List<Device> b) {
    long unknownA = a.stream().filter(d -> d.numaNodes().isEmpty()).count();
    long unknownB = b.stream().filter(d -> d.numaNodes().isEmpty()).count();
    if (unknownA != unknownB) {
      return unknownA < unknownB;
    }
    int[] ia = a.stream().mapToInt(choice::order).sorted().toArray();
    int[] ib = b.stream().mapToInt(choice::order).sorted().toArray();
    return java.util.Arrays.compare(ia, ib) < 0;
  }

  private static List<Set<Integer>> subsets(List<Integer> items, int size) {
    List<Set<Integer>> out = new ArrayList<>();
    collect(items, size, 0, new ArrayList<>(), out);
    return out;
  }

  private static void collect(
      List<Integer> items, int size, int from, List<Integer> current, List<Set<Integer>> out) {
    if (current.size() == size) {
      out.add(new TreeSet<>(current));
      return;
    }
    for (int i = from; i < items.size(); i++) {
      current.add(items.get(i));
      collect(items, size, i + 1, current, out);
      current.remove(current.size() - 1);
    }
  }

  private static List<String> packedChoice(PreferredAllocationRequest request) {
    Choice choice = new Choice(request);
    Set<Integer> mustNodes = new TreeSet<>();
    choice.chosen.forEach(d -> mustNodes.addAll(d.numaNodes()));
    List<Device> ordered = new ArrayList<>(choice.candidates);
    ordered.sort(
        Comparator.<Device>comparingInt(d -> packRank(d, mustNodes))
            .thenComparingInt(AllocationPolicies::node)
            .thenComparingInt(choice::order));
    choice.chosen.addAll(ordered.subList(0, Math.min(choice.needed(), ordered.size())));
    return choice.result();
  }

  /** 0: on a must-include node, 1: elsewhere, 2: no topology. */
  private static int packRank(Device d, Set<Integer> mustNodes) {
    if (d.numaNodes().isEmpty()) {
      return 2;
    }
    return mustNodes.containsAll(d.numaNodes()) ? 0 : 1;
  }

  private static List<String> spreadChoice(PreferredAllocationRequest request) {
    Choice choice = new Choice(request);
    Map<Integer, Integer> load = new HashMap<>();
    choice.chosen.forEach(d -> load.merge(node(d), 1, Integer::sum));
    TreeMap<Integer, List<Device>> byNode = new TreeMap<>();
    for (Device d : choice.candidates) {
      byNode.computeIfAbsent(node(d), k -> new ArrayList<>()).add(d);
    }
    int needed = choice.needed();
    while (needed > 0) {
      Integer best = null;
      for (Map.Entry<Integer, List<Device>> e : byNode.entrySet()) {
        if (e.getValue().isEmpty() || (e.getKey() == NO_NODE && hasTopologyLeft(byNode))) {
          continue;
        }
        if (best == null || load.getOrDefault(e.getKey(), 0) < load.getOrDefault(best, 0)) {
          best = e.getKey();
        }
      }
      if (best == null) {
        break;
      }
      choice.chosen.add(byNode.get(best).remove(0));
      load.merge(best, 1, Integer::sum);
      needed--;
    }
    return choice.result();
  }

  private static boolean hasTopologyLeft(TreeMap<Integer, List<Device>> byNode) {
    return byNode.entrySet().stream()
        .anyMatch(e -> e.getKey() != NO_NODE && !e.getValue().isEmpty());
  }

  private static int node(Device d) {
    return d.numaNodes().isEmpty() ? NO_NODE : d.numaNodes().get(0);
  }

  /** Must-include devices first, then candidates in kubelet order. */
  private static final class Choice {
    final int size;
    final LinkedHashSet<Device> chosen = new LinkedHashSet<>();
    final List<Device> candidates = new ArrayList<>();
    final Map<String, Integer> order = new HashMap<>();

    Choice(PreferredAllocationRequest request) {
      this.size = request.size();
      List<Device> available = request.available();
      for (int i = 0; i < available.size(); i++) {
        order.putIfAbsent(available.get(i).id(), i);
      }
      Set<String> must = new LinkedHashSet<>(request.mustIncludeIds());
      for (Device d : request.mustInclude()) {
        chosen.add(d);
      }
      for (Device d : available) {
        if (!must.contains(d.id()) && candidates.stream().noneMatch(c -> c.id().equals(d.id()))) {
          candidates.add(d);
        }
      }
    }

    int needed() {
      return Math.max(0, size - chosen.size());
    }

    int order(Device d) {
      return order.getOrDefault(d.id(), Integer.MAX_VALUE);
    }

    List<String> result() {
      return chosen.stream().map(Device::id).toList();
    }
  }
}
