package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Allocates one claim from ResourceSlices and DeviceClasses the way the 1.37 scheduler's structured
 * allocator does ({@code staging/src/k8s.io/dynamic-resource-allocation/structured/}, the
 * incubating allocator in {@code internal/experimental/allocator_experimental.go} and {@code
 * consumable_capacity.go}), for one node: a backtracking search over the requests in order and the
 * devices in slice order. Socket- and server-free; {@link DraScheduler} feeds it from the API
 * server.
 */
final class Allocator {
  /** The namespace label upstream requires for claims with admin access. */
  static final String ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access";

  private final String nodeName;
  private final Map<String, DeviceClass> classes;
  private final List<Candidate> candidates = new ArrayList<>();
  private final Map<String, Map<String, BigDecimal>> counterSets = new HashMap<>();
  private final Set<String> exclusive = new LinkedHashSet<>();
  private final Map<String, Map<String, BigDecimal>> consumedCapacity = new HashMap<>();
  private final Map<String, Map<String, BigDecimal>> consumedCounters = new HashMap<>();
  private final Set<String> countedDevices = new LinkedHashSet<>();
  private final Supplier<String> shareIds;

  /** A device this node can use, with where it was published. */
  record Candidate(String driver, String pool, Device device) {
    String id() {
      return driver + "/" + pool + "/" + device.getName();
    }
  }

  /** One device picked for one request during the search. */
  private record Pick(
      String request, Candidate device, boolean admin, Map<String, BigDecimal> consumed) {}

  /** One way to satisfy a request: the request itself or one of its subrequests. */
  private record Alternative(
      String resultName,
      String className,
      List<DeviceSelector> selectors,
      String mode,
      long count,
      boolean admin,
      List<DeviceToleration> tolerations,
      CapacityRequirements capacity) {}

  Allocator(
      String nodeName,
      List<ResourceSlice> slices,
      List<DeviceClass> classes,
      List<ResourceClaim> allocatedClaims,
      Supplier<String> shareIds) {
    this.nodeName = nodeName;
    this.shareIds = shareIds;
    this.classes = new LinkedHashMap<>();
    for (DeviceClass c : classes) {
      this.classes.put(c.getMetadata().getName(), c);
    }
    gather(slices);
    for (ResourceClaim c : allocatedClaims) {
      if (c.getStatus() == null || c.getStatus().getAllocation() == null) {
        continue;
      }
      for (DeviceRequestAllocationResult r : results(c.getStatus().getAllocation())) {
        if (Boolean.TRUE.equals(r.getAdminAccess())) {
          continue; // admin access ignores and does not take devices
        }
        String id = r.getDriver() + "/" + r.getPool() + "/" + r.getDevice();
        if (r.getShareID() == null) {
          exclusive.add(id);
        } else if (r.getConsumedCapacity() != null) {
          Map<String, BigDecimal> used = consumedCapacity.computeIfAbsent(id, k -> new HashMap<>());
          r.getConsumedCapacity().forEach((k, v) -> used.merge(k, amount(v), BigDecimal::add));
        }
        candidates.stream()
            .filter(d -> d.id().equals(id))
            .findFirst()
            .ifPresent(d -> consumeCounters(d, consumedCounters, countedDevices));
      }
    }
  }

  private static List<DeviceRequestAllocationResult> results(AllocationResult a) {
    return a.getDevices() == null || a.getDevices().getResults() == null
        ? List.of()
        : a.getDevices().getResults();
  }

  /**
   * The devices of the node: slices of this node or of all nodes, only a pool's newest generation
   * (upstream ignores the rest), shared counters by (driver, pool, set).
   */
  private void gather(List<ResourceSlice> slices) {
    Map<String, Long> generation = new HashMap<>();
    for (ResourceSlice s : slices) {
      String pool = s.getSpec().getDriver() + "/" + s.getSpec().getPool().getName();
      generation.merge(pool, gen(s), Math::max);
    }
    List<ResourceSlice> sorted = new ArrayList<>(slices);
    sorted.sort(
        Comparator.comparing((ResourceSlice s) -> s.getSpec().getDriver())
            .thenComparing(s -> s.getSpec().getPool().getName())
            .thenComparing(s -> s.getMetadata().getName()));
    for (ResourceSlice s : sorted) {
      var spec = s.getSpec();
      String pool = spec.getDriver() + "/" + spec.getPool().getName();
      if (gen(s) != generation.get(pool)) {
        continue;
      }
      for (CounterSet set : Optional.ofNullable(spec.getSharedCounters()).orElse(List.of())) {
        Map<String, BigDecimal> values = new HashMap<>();
        set.getCounters().forEach((k, v) -> values.put(k, amount(v.getValue())));
        counterSets.put(pool + "/" + set.getName(), values);
      }
      boolean sliceOnNode =
          nodeName.equals(spec.getNodeName()) || Boolean.TRUE.equals(spec.getAllNodes());
      for (Device d : Optional.ofNullable(spec.getDevices()).orElse(List.of())) {
        boolean onNode =
            Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())
                ? nodeName.equals(d.getNodeName()) || Boolean.TRUE.equals(d.getAllNodes())
                : sliceOnNode;
        if (onNode) {
          candidates.add(new Candidate(spec.getDriver(), spec.getPool().getName(), d));
        }
      }
    }
  }

  private static long gen(ResourceSlice s) {
    Long g = s.getSpec().getPool().getGeneration();
    return g == null ? 0 : g;
  }

  /**
   * Allocates the claim or throws naming why not.
   *
   * @param claim the claim
   * @param namespaceLabels the labels of the claim's namespace (admin access needs one)
   * @return the allocation for {@code status.allocation}
   */
  AllocationResult allocate(ResourceClaim claim, Map<String, String> namespaceLabels) {
    String who = claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName();
    var devices = claim.getSpec() == null ? null : claim.getSpec().getDevices();
    List<DeviceRequest> requests =
        devices == null || devices.getRequests() == null ? List.of() : devices.getRequests();
    if (requests.isEmpty()) {
      throw new DraAllocationException(who, "the claim has no device requests");
    }
    List<List<Alternative>> alternatives = new ArrayList<>();
    for (DeviceRequest r : requests) {
      List<Alternative> alts = alternatives(who, r);
      for (Alternative a : alts) {
        if (a.admin() && !"true".equals(namespaceLabels.get(ADMIN_ACCESS_LABEL))) {
          throw new DraAllocationException(
              who,
              "request "
                  + quote(r.getName())
                  + " asks for admin access, which needs the label "
                  + ADMIN_ACCESS_LABEL
                  + "=true on namespace "
                  + claim.getMetadata().getNamespace()
                  + " (the API server refuses such a claim elsewhere)");
        }
        if (!classes.containsKey(a.className())) {
          throw new DraAllocationException(
              who,
              "request "
                  + quote(a.resultName())
                  + " names DeviceClass "
                  + quote(a.className())
                  + ", which does not exist");
        }
      }
      alternatives.add(alts);
    }
    List<DeviceConstraint> constraints =
        devices.getConstraints() == null ? List.of() : devices.getConstraints();
    List<Pick> picks = new ArrayList<>();
    try {
      if (!solve(alternatives, 0, constraints, picks)) {
        throw new DraAllocationException(who, explain(alternatives));
      }
    } catch (DraAllocationException e) {
      throw e.claim().isEmpty() ? new DraAllocationException(who, e.getMessage()) : e;
    }
    return result(claim, requests, picks);
  }

  private static List<Alternative> alternatives(String who, DeviceRequest r) {
    if (r.getExactly() != null) {
      ExactDeviceRequest e = r.getExactly();
      return List.of(
          new Alternative(
              r.getName(),
              e.getDeviceClassName(),
              orEmpty(e.getSelectors()),
              e.getAllocationMode() == null ? "ExactCount" : e.getAllocationMode(),
              e.getCount() == null ? 1 : e.getCount(),
              Boolean.TRUE.equals(e.getAdminAccess()),
              orEmpty(e.getTolerations()),
              e.getCapacity()));
    }
    if (r.getFirstAvailable() != null && !r.getFirstAvailable().isEmpty()) {
      List<Alternative> out = new ArrayList<>();
      for (DeviceSubRequest s : r.getFirstAvailable()) {
        out.add(
            new Alternative(
                r.getName() + "/" + s.getName(),
                s.getDeviceClassName(),
                orEmpty(s.getSelectors()),
                s.getAllocationMode() == null ? "ExactCount" : s.getAllocationMode(),
                s.getCount() == null ? 1 : s.getCount(),
                false,
                orEmpty(s.getTolerations()),
                s.getCapacity()));
      }
      return out;
    }
    throw new DraAllocationException(
        who, "request " + quote(r.getName()) + " has neither exactly nor firstAvailable");
  }

  // ---- search

  private boolean solve(
      List<List<Alternative>> requests,
      int index,
      List<DeviceConstraint> constraints,
      List<Pick> picks) {
    if (index == requests.size()) {
      return true;
    }
    for (Alternative a : requests.get(index)) {
      if (a.mode().equals("All")) {
        List<Candidate> all = candidates.stream().filter(c -> selected(a, c)).toList();
        if (all.isEmpty()) {
          continue;
        }
        int mark = picks.size();
        boolean ok = true;
        for (Candidate c : all) {
          Optional<Pick> p = fits(a, c, picks, constraints);
          if (p.isEmpty()) {
            ok = false;
            break;
          }
          picks.add(p.get());
        }
        if (ok && solve(requests, index + 1, constraints, picks)) {
          return true;
        }
        truncate(picks, mark);
      } else if (pick(requests, index, a, a.count(), 0, constraints, picks)) {
        return true;
      }
    }
    return false;
  }

  private boolean pick(
      List<List<Alternative>> requests,
      int index,
      Alternative a,
      long missing,
      int from,
      List<DeviceConstraint> constraints,
      List<Pick> picks) {
    if (missing == 0) {
      return solve(requests, index + 1, constraints, picks);
    }
    for (int i = from; i < candidates.size(); i++) {
      Candidate c = candidates.get(i);
      if (!selected(a, c)) {
        continue;
      }
      Optional<Pick> p = fits(a, c, picks, constraints);
      if (p.isEmpty()) {
        continue;
      }
      picks.add(p.get());
      if (pick(requests, index, a, missing - 1, i + 1, constraints, picks)) {
        return true;
      }
      picks.remove(picks.size() - 1);
    }
    return false;
  }

  private static void truncate(List<Pick> picks, int size) {
    while (picks.size() > size) {
      picks.remove(picks.size() - 1);
    }
  }

  /** Whether the class's and the request's selectors match the device. */
  private boolean selected(Alternative a, Candidate c) {
    DeviceClass cls = classes.get(a.className());
    List<DeviceSelector> all = new ArrayList<>(orEmpty(cls.getSpec().getSelectors()));
    all.addAll(a.selectors());
    Map<String, Object> device = celDevice(c);
    for (DeviceSelector s : all) {
      if (s.getCel() == null) {
        continue;
      }
      try {
        if (!Cel.matches(s.getCel().getExpression(), device)) {
          return false;
        }
      } catch (Cel.CelException e) {
        throw new DraAllocationException(
            "",
            "selector of "
                + quote(a.resultName())
                + " (or of DeviceClass "
                + a.className()
                + ") on device "
                + c.id()
                + ": "
                + e.getMessage());
      }
    }
    return true;
  }

  /** Why a device that the selectors chose cannot be taken now, or empty when it can. */
  private Optional<String> refusal(Alternative a, Candidate c, List<Pick> picks) {
    for (DeviceTaint t : orEmpty(c.device().getTaints())) {
      boolean blocking = "NoSchedule".equals(t.getEffect()) || "NoExecute".equals(t.getEffect());
      if (blocking && a.tolerations().stream().noneMatch(tol -> tolerates(tol, t))) {
        return Optional.of(
            "tainted "
                + t.getKey()
                + "="
                + Objects.toString(t.getValue(), "")
                + ":"
                + t.getEffect());
      }
    }
    if (a.admin()) {
      return Optional.empty();
    }
    boolean multi = Boolean.TRUE.equals(c.device().getAllowMultipleAllocations());
    String id = c.id();
    if (!multi) {
      if (exclusive.contains(id) || consumedCapacity.containsKey(id)) {
        return Optional.of("allocated to another claim");
      }
      if (picks.stream().anyMatch(p -> !p.admin() && p.device().id().equals(id))) {
        return Optional.of("already picked for this claim");
      }
    } else if (exclusive.contains(id)) {
      return Optional.of("allocated to another claim");
    }
    Optional<String> capacity = capacityRefusal(a, c, picks);
    if (capacity.isPresent()) {
      return capacity;
    }
    return counterRefusal(c, picks);
  }

  private Optional<Pick> fits(
      Alternative a, Candidate c, List<Pick> picks, List<DeviceConstraint> constraints) {
    if (refusal(a, c, picks).isPresent() || !constraintsHold(a, c, picks, constraints)) {
      return Optional.empty();
    }
    boolean multi = Boolean.TRUE.equals(c.device().getAllowMultipleAllocations());
    Map<String, BigDecimal> consumed = multi && !a.admin() ? consumption(a, c) : null;
    return Optional.of(new Pick(a.resultName(), c, a.admin(), consumed));
  }

  private static boolean tolerates(DeviceToleration tol, DeviceTaint taint) {
    if (tol.getEffect() != null
        && !tol.getEffect().isEmpty()
        && !tol.getEffect().equals(taint.getEffect())) {
      return false;
    }
    if ("Exists".equals(tol.getOperator())) {
      return tol.getKey() == null || tol.getKey().isEmpty() || tol.getKey().equals(taint.getKey());
    }
    return Objects.equals(tol.getKey(), taint.getKey())
        && Objects.equals(
            Objects.toString(tol.getValue(), ""), Objects.toString(taint.getValue(), ""));
  }

  // ---- consumable capacity (consumable_capacity.go)

  /** What one allocation of the device consumes, capacity by capacity; null when not possible. */
  private Map<String, BigDecimal> consumption(Alternative a, Candidate c) {
    Map<String, DeviceCapacity> capacities = orEmpty(c.device().getCapacity());
    Map<String, Quantity> requested =
        a.capacity() == null || a.capacity().getRequests() == null
            ? Map.of()
            : a.capacity().getRequests();
    for (String name : requested.keySet()) {
      if (capacityName(name, c, capacities) == null) {
        return null;
      }
    }
    Map<String, BigDecimal> out = new TreeMap<>();
    for (Map.Entry<String, DeviceCapacity> e : capacities.entrySet()) {
      BigDecimal asked = null;
      for (Map.Entry<String, Quantity> r : requested.entrySet()) {
        if (e.getKey().equals(capacityName(r.getKey(), c, capacities))) {
          asked = amount(r.getValue());
        }
      }
      BigDecimal v =
          consumed(asked, amount(e.getValue().getValue()), e.getValue().getRequestPolicy());
      if (v == null) {
        return null;
      }
      out.put(e.getKey(), v);
    }
    return out;
  }

  /** The device's capacity a request names, with or without the driver's domain; null if none. */
  private static String capacityName(String name, Candidate c, Map<String, DeviceCapacity> caps) {
    if (caps.containsKey(name)) {
      return name;
    }
    String prefix = c.driver() + "/";
    if (name.startsWith(prefix) && caps.containsKey(name.substring(prefix.length()))) {
      return name.substring(prefix.length());
    }
    if (!name.contains("/") && caps.containsKey(prefix + name)) {
      return prefix + name;
    }
    return null;
  }

  /**
   * The amount one allocation consumes: the default (or the whole capacity) when nothing is asked,
   * the request rounded up to a valid value or range step; null when the policy refuses it.
   */
  static BigDecimal consumed(BigDecimal asked, BigDecimal total, CapacityRequestPolicy policy) {
    if (asked == null) {
      return policy != null && policy.getDefault() != null ? amount(policy.getDefault()) : total;
    }
    if (policy == null) {
      return asked;
    }
    if (policy.getValidRange() != null && policy.getValidRange().getMin() != null) {
      BigDecimal min = amount(policy.getValidRange().getMin());
      BigDecimal v = asked.max(min);
      if (policy.getValidRange().getStep() != null) {
        BigDecimal step = amount(policy.getValidRange().getStep());
        BigDecimal steps = v.subtract(min).divide(step, 0, RoundingMode.CEILING);
        v = min.add(steps.multiply(step));
      }
      if (policy.getValidRange().getMax() != null
          && v.compareTo(amount(policy.getValidRange().getMax())) > 0) {
        return null;
      }
      return v;
    }
    if (policy.getValidValues() != null && !policy.getValidValues().isEmpty()) {
      return policy.getValidValues().stream()
          .map(Allocator::amount)
          .filter(v -> v.compareTo(asked) >= 0)
          .min(Comparator.naturalOrder())
          .orElse(null);
    }
    return asked;
  }

  private Optional<String> capacityRefusal(Alternative a, Candidate c, List<Pick> picks) {
    boolean multi = Boolean.TRUE.equals(c.device().getAllowMultipleAllocations());
    Map<String, DeviceCapacity> caps = orEmpty(c.device().getCapacity());
    if (!multi) {
      // A device for one claim: what is asked must fit into what it has.
      if (a.capacity() == null || a.capacity().getRequests() == null) {
        return Optional.empty();
      }
      for (Map.Entry<String, Quantity> r : a.capacity().getRequests().entrySet()) {
        String name = capacityName(r.getKey(), c, caps);
        if (name == null) {
          return Optional.of("has no capacity " + r.getKey());
        }
        DeviceCapacity cap = caps.get(name);
        BigDecimal v =
            consumed(amount(r.getValue()), amount(cap.getValue()), cap.getRequestPolicy());
        if (v == null || v.compareTo(amount(cap.getValue())) > 0) {
          return Optional.of("capacity " + name + " too small for " + r.getValue());
        }
      }
      return Optional.empty();
    }
    Map<String, BigDecimal> mine = consumption(a, c);
    if (mine == null) {
      return Optional.of("capacity request outside the device's request policy");
    }
    for (Map.Entry<String, BigDecimal> e : mine.entrySet()) {
      BigDecimal used =
          consumedCapacity.getOrDefault(c.id(), Map.of()).getOrDefault(e.getKey(), BigDecimal.ZERO);
      for (Pick p : picks) {
        if (p.device().id().equals(c.id()) && p.consumed() != null) {
          used = used.add(p.consumed().getOrDefault(e.getKey(), BigDecimal.ZERO));
        }
      }
      BigDecimal total = amount(caps.get(e.getKey()).getValue());
      if (used.add(e.getValue()).compareTo(total) > 0) {
        return Optional.of(
            "capacity "
                + e.getKey()
                + " exhausted ("
                + used.stripTrailingZeros().toPlainString()
                + " of "
                + total.stripTrailingZeros().toPlainString()
                + " consumed)");
      }
    }
    return Optional.empty();
  }

  // ---- shared counters (partitionable devices)

  private Optional<String> counterRefusal(Candidate c, List<Pick> picks) {
    if (c.device().getConsumesCounters() == null || c.device().getConsumesCounters().isEmpty()) {
      return Optional.empty();
    }
    Map<String, Map<String, BigDecimal>> used = copy(consumedCounters);
    Set<String> counted = new LinkedHashSet<>(countedDevices);
    for (Pick p : picks) {
      if (!p.admin()) {
        consumeCounters(p.device(), used, counted);
      }
    }
    if (counted.contains(c.id())) {
      return Optional.empty(); // a shared device consumes its counters once
    }
    consumeCounters(c, used, counted);
    String pool = c.driver() + "/" + c.pool();
    for (DeviceCounterConsumption dc : c.device().getConsumesCounters()) {
      String set = pool + "/" + dc.getCounterSet();
      Map<String, BigDecimal> available = counterSets.get(set);
      if (available == null) {
        return Optional.of("counter set " + dc.getCounterSet() + " not published in its pool");
      }
      for (String counter : dc.getCounters().keySet()) {
        BigDecimal have = available.getOrDefault(counter, BigDecimal.ZERO);
        BigDecimal need = used.get(set).get(counter);
        if (need.compareTo(have) > 0) {
          return Optional.of(
              "counter "
                  + dc.getCounterSet()
                  + "/"
                  + counter
                  + " exhausted (a device sharing it is allocated)");
        }
      }
    }
    return Optional.empty();
  }

  private static void consumeCounters(
      Candidate c, Map<String, Map<String, BigDecimal>> used, Set<String> counted) {
    if (!counted.add(c.id()) || c.device().getConsumesCounters() == null) {
      return;
    }
    for (DeviceCounterConsumption dc : c.device().getConsumesCounters()) {
      Map<String, BigDecimal> set =
          used.computeIfAbsent(
              c.driver() + "/" + c.pool() + "/" + dc.getCounterSet(), k -> new HashMap<>());
      for (Map.Entry<String, Counter> e : dc.getCounters().entrySet()) {
        set.merge(e.getKey(), amount(e.getValue().getValue()), BigDecimal::add);
      }
    }
  }

  private static Map<String, Map<String, BigDecimal>> copy(Map<String, Map<String, BigDecimal>> m) {
    Map<String, Map<String, BigDecimal>> out = new HashMap<>();
    m.forEach((k, v) -> out.put(k, new HashMap<>(v)));
    return out;
  }

  // ---- constraints

  private boolean constraintsHold(
      Alternative a, Candidate c, List<Pick> picks, List<DeviceConstraint> constraints) {
    String request = a.resultName().split("/", 2)[0];
    for (DeviceConstraint k : constraints) {
      List<String> covered = orEmpty(k.getRequests());
      if (!covered.isEmpty() && !covered.contains(request)) {
        continue;
      }
      String attribute =
          k.getMatchAttribute() != null ? k.getMatchAttribute() : k.getDistinctAttribute();
      if (attribute == null) {
        continue;
      }
      Object mine = attribute(c, attribute);
      for (Pick p : picks) {
        String other = p.request().split("/", 2)[0];
        if (!covered.isEmpty() && !covered.contains(other)) {
          continue;
        }
        Object theirs = attribute(p.device(), attribute);
        if (k.getMatchAttribute() != null && (mine == null || !mine.equals(theirs))) {
          return false;
        }
        if (k.getDistinctAttribute() != null && mine != null && mine.equals(theirs)) {
          return false;
        }
      }
      if (k.getMatchAttribute() != null && mine == null) {
        return false;
      }
    }
    return true;
  }

  private static Object attribute(Candidate c, String qualified) {
    Map<String, Map<String, Object>> attrs = attributes(c);
    int slash = qualified.lastIndexOf('/');
    if (slash < 0) {
      return null;
    }
    return attrs
        .getOrDefault(qualified.substring(0, slash), Map.of())
        .get(qualified.substring(slash + 1));
  }

  // ---- the CEL view of a device

  private static Map<String, Object> celDevice(Candidate c) {
    Map<String, Object> d = new HashMap<>();
    d.put("driver", c.driver());
    d.put("attributes", new HashMap<>(attributes(c)));
    Map<String, Object> capacity = new HashMap<>();
    orEmpty(c.device().getCapacity())
        .forEach(
            (name, cap) -> {
              String[] q = qualify(name, c.driver());
              @SuppressWarnings("unchecked")
              Map<String, Object> domain =
                  (Map<String, Object>) capacity.computeIfAbsent(q[0], k -> new HashMap<>());
              domain.put(q[1], amount(cap.getValue()));
            });
    d.put("capacity", capacity);
    d.put(
        "allowMultipleAllocations", Boolean.TRUE.equals(c.device().getAllowMultipleAllocations()));
    return d;
  }

  private static Map<String, Map<String, Object>> attributes(Candidate c) {
    Map<String, Map<String, Object>> out = new HashMap<>();
    for (Map.Entry<String, DeviceAttribute> e : orEmpty(c.device().getAttributes()).entrySet()) {
      String[] q = qualify(e.getKey(), c.driver());
      DeviceAttribute a = e.getValue();
      Object v =
          a.getString() != null
              ? a.getString()
              : a.getInt() != null
                  ? a.getInt()
                  : a.getBool() != null ? a.getBool() : a.getVersion();
      if (v != null) {
        out.computeIfAbsent(q[0], k -> new HashMap<>()).put(q[1], v);
      }
    }
    return out;
  }

  private static String[] qualify(String name, String driver) {
    int slash = name.lastIndexOf('/');
    return slash < 0
        ? new String[] {driver, name}
        : new String[] {name.substring(0, slash), name.substring(slash + 1)};
  }

  // ---- result and errors

  private AllocationResult result(
      ResourceClaim claim, List<DeviceRequest> requests, List<Pick> picks) {
    List<DeviceRequestAllocationResult> results = new ArrayList<>();
    boolean bindingConditions = false;
    for (Pick p : picks) {
      Device d = p.device().device();
      DeviceRequestAllocationResultBuilder b =
          new DeviceRequestAllocationResultBuilder()
              .withRequest(p.request())
              .withDriver(p.device().driver())
              .withPool(p.device().pool())
              .withDevice(d.getName());
      if (p.admin()) {
        b.withAdminAccess(true);
      }
      List<DeviceToleration> tolerations = tolerationsOf(requests, p.request());
      if (!tolerations.isEmpty()) {
        b.withTolerations(tolerations);
      }
      if (d.getBindingConditions() != null && !d.getBindingConditions().isEmpty()) {
        bindingConditions = true;
        b.withBindingConditions(d.getBindingConditions())
            .withBindingFailureConditions(d.getBindingFailureConditions());
      }
      if (p.consumed() != null) {
        Map<String, Quantity> consumed = new TreeMap<>();
        p.consumed()
            .forEach(
                (k, v) -> consumed.put(k, new Quantity(v.stripTrailingZeros().toPlainString())));
        b.withShareID(shareIds.get()).withConsumedCapacity(consumed);
      }
      results.add(b.build());
    }
    AllocationResultBuilder out =
        new AllocationResultBuilder()
            .withNewDevices()
            .withResults(results)
            .withConfig(config(claim, picks))
            .endDevices();
    if (picks.stream().anyMatch(p -> !Boolean.TRUE.equals(p.device().device().getAllNodes()))) {
      out.withNodeSelector(
          new NodeSelectorBuilder()
              .addNewNodeSelectorTerm()
              .addNewMatchField()
              .withKey("metadata.name")
              .withOperator("In")
              .withValues(nodeName)
              .endMatchField()
              .endNodeSelectorTerm()
              .build());
    }
    if (bindingConditions) {
      // Upstream records when the allocation was made, to time out binding conditions.
      out.withAllocationTimestamp(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    }
    return out.build();
  }

  private static List<DeviceToleration> tolerationsOf(List<DeviceRequest> requests, String result) {
    String[] parts = result.split("/", 2);
    for (DeviceRequest r : requests) {
      if (!r.getName().equals(parts[0])) {
        continue;
      }
      if (parts.length == 1 && r.getExactly() != null) {
        return orEmpty(r.getExactly().getTolerations());
      }
      for (DeviceSubRequest s : orEmpty(r.getFirstAvailable())) {
        if (parts.length == 2 && s.getName().equals(parts[1])) {
          return orEmpty(s.getTolerations());
        }
      }
    }
    return List.of();
  }

  /** The classes' configuration, then the claim's, for the requests that got devices. */
  private List<DeviceAllocationConfiguration> config(ResourceClaim claim, List<Pick> picks) {
    List<DeviceAllocationConfiguration> out = new ArrayList<>();
    Map<String, List<String>> byClass = new LinkedHashMap<>();
    for (Pick p : picks) {
      String className = null;
      for (DeviceRequest r : claim.getSpec().getDevices().getRequests()) {
        String[] parts = p.request().split("/", 2);
        if (!r.getName().equals(parts[0])) {
          continue;
        }
        className =
            parts.length == 1
                ? r.getExactly().getDeviceClassName()
                : r.getFirstAvailable().stream()
                    .filter(s -> s.getName().equals(parts[1]))
                    .findFirst()
                    .map(DeviceSubRequest::getDeviceClassName)
                    .orElse(null);
      }
      if (className != null) {
        List<String> reqs = byClass.computeIfAbsent(className, k -> new ArrayList<>());
        if (!reqs.contains(p.request())) {
          reqs.add(p.request());
        }
      }
    }
    byClass.forEach(
        (className, reqs) -> {
          for (DeviceClassConfiguration c : orEmpty(classes.get(className).getSpec().getConfig())) {
            DeviceAllocationConfiguration a = new DeviceAllocationConfiguration();
            a.setSource("FromClass");
            a.setRequests(reqs);
            a.setOpaque(c.getOpaque());
            out.add(a);
          }
        });
    for (DeviceClaimConfiguration c : orEmpty(claim.getSpec().getDevices().getConfig())) {
      DeviceAllocationConfiguration a = new DeviceAllocationConfiguration();
      a.setSource("FromClaim");
      a.setRequests(c.getRequests());
      a.setOpaque(c.getOpaque());
      out.add(a);
    }
    return out;
  }

  /** Per request: how many devices it needs and why the devices its selectors chose do not fit. */
  private String explain(List<List<Alternative>> requests) {
    List<String> parts = new ArrayList<>();
    for (List<Alternative> alts : requests) {
      for (Alternative a : alts) {
        List<Candidate> chosen = candidates.stream().filter(c -> selected(a, c)).toList();
        Map<String, Integer> reasons = new TreeMap<>();
        int free = 0;
        for (Candidate c : chosen) {
          Optional<String> why = refusal(a, c, List.of());
          if (why.isPresent()) {
            reasons.merge(why.get(), 1, Integer::sum);
          } else {
            free++;
          }
        }
        StringBuilder s = new StringBuilder();
        s.append("request ")
            .append(quote(a.resultName()))
            .append(" needs ")
            .append(a.mode().equals("All") ? "all" : String.valueOf(a.count()))
            .append(" device(s) of class ")
            .append(a.className())
            .append(": ");
        if (chosen.isEmpty()) {
          s.append("no device on node ").append(nodeName).append(" matches its selectors");
        } else {
          s.append(chosen.size()).append(" match, ").append(free).append(" free");
          reasons.forEach((why, n) -> s.append(", ").append(n).append(' ').append(why));
        }
        parts.add(s.toString());
      }
    }
    return String.join("; ", parts)
        + (parts.size() > 1 ? " (or no combination satisfies the claim's constraints)" : "");
  }

  static BigDecimal amount(Quantity q) {
    return q == null ? BigDecimal.ZERO : Quantity.getAmountInBytes(q);
  }

  private static <T> List<T> orEmpty(List<T> l) {
    return l == null ? List.of() : l;
  }

  private static <K, V> Map<K, V> orEmpty(Map<K, V> m) {
    return m == null ? Map.of() : m;
  }

  private static String quote(String s) {
    return '"' + s + '"';
  }

  static String newShareId() {
    return UUID.randomUUID().toString();
  }
}
