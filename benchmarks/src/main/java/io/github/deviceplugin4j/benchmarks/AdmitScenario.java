package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc.DevicePluginBlockingStub;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * GetPreferredAllocation choosing 8 of 64 devices, and the kubelet's whole admit path for one
 * device (GetPreferredAllocation → Allocate → PreStartContainer, as the fake kubelet's device
 * manager runs it, with its bookkeeping), SDK against baseline, alternating blocks.
 */
public final class AdmitScenario implements Scenario {

  static final int DEVICES = 64;
  static final int CHOOSE = 8;
  static final String SDK = "bench.example.com/sdk";
  static final String BASELINE = "bench.example.com/baseline";
  static final int ROUNDS = 4;

  @Override
  public String name() {
    return "admit";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    Sizes sizes = ctx.sizes();
    List<List<String>> rows =
        report.table(
            "GetPreferredAllocation and the admit path",
            "Concurrency 1; latencies in µs. preferred: "
                + Fmt.count(sizes.preferredCalls())
                + " calls choosing "
                + CHOOSE
                + " of "
                + DEVICES
                + " available devices (first fit in both plugins). admit: "
                + Fmt.count(sizes.admitCalls())
                + " one-device pod admissions through the fake kubelet (GetPreferredAllocation →"
                + " Allocate → PreStartContainer, plus the kubelet's own bookkeeping), each"
                + " released after.",
            "operation",
            "plugin",
            "calls",
            "p50",
            "p90",
            "p99",
            "max");
    try (Node node = new Node(ctx.newDir("admit"))) {
      node.sdk(DEVICES, new BenchBackend(SDK, DEVICES));
      node.baseline(BASELINE, DEVICES);
      PreferredAllocationRequest request = preferredRequest();
      Map<String, Stats> preferred =
          alternate(
              sizes.preferredCalls(),
              sizes.preferredCalls(),
              r -> {
                DevicePluginBlockingStub stub = node.stub(r);
                return i -> checkPreferred(stub, request);
              });
      add(rows, "preferred", preferred);
      FakeKubelet kubelet = node.kubelet();
      Map<String, Stats> admit =
          alternate(
              sizes.admitCalls(),
              sizes.admitCalls(),
              r ->
                  i -> {
                    long t0 = System.nanoTime();
                    Allocation a = kubelet.allocate(r, 1);
                    long took = System.nanoTime() - t0;
                    kubelet.release(a.podUid());
                    return took;
                  });
      add(rows, "admit", admit);
    }
  }

  /** A measured call that returns its own latency in nanoseconds. */
  @FunctionalInterface
  interface Timed {
    long call(int i) throws Exception;
  }

  @FunctionalInterface
  interface Factory {
    Timed forResource(String resource) throws Exception;
  }

  private static Map<String, Stats> alternate(int warmup, int calls, Factory factory)
      throws Exception {
    List<String> order = new ArrayList<>(List.of(SDK, BASELINE));
    Map<String, Timed> timed = new java.util.LinkedHashMap<>();
    for (String r : order) {
      timed.put(r, factory.forResource(r));
    }
    for (String r : order) {
      for (int i = 0; i < warmup; i++) {
        timed.get(r).call(i);
      }
    }
    int perRound = calls / ROUNDS;
    Map<String, long[]> lat = new java.util.LinkedHashMap<>();
    order.forEach(r -> lat.put(r, new long[perRound * ROUNDS]));
    for (int round = 0; round < ROUNDS; round++) {
      for (String r : order) {
        for (int i = 0; i < perRound; i++) {
          lat.get(r)[round * perRound + i] = timed.get(r).call(i);
        }
      }
      java.util.Collections.reverse(order);
    }
    Map<String, Stats> stats = new java.util.LinkedHashMap<>();
    lat.forEach((r, l) -> stats.put(r, Stats.of(l)));
    return stats;
  }

  private static void add(List<List<String>> rows, String op, Map<String, Stats> stats) {
    Stats sdk = stats.get(SDK);
    Stats base = stats.get(BASELINE);
    for (Map.Entry<String, Stats> e : stats.entrySet()) {
      Stats s = e.getValue();
      rows.add(
          List.of(
              op,
              e.getKey().equals(SDK) ? "sdk" : "baseline",
              Fmt.count(s.count()),
              Fmt.us(s.percentile(50)),
              Fmt.us(s.percentile(90)),
              Fmt.us(s.percentile(99)),
              Fmt.us(s.max())));
    }
    rows.add(
        List.of(
            op,
            "**sdk / baseline**",
            "",
            Fmt.ratio((double) sdk.percentile(50) / base.percentile(50)),
            Fmt.ratio((double) sdk.percentile(90) / base.percentile(90)),
            Fmt.ratio((double) sdk.percentile(99) / base.percentile(99)),
            ""));
  }

  static PreferredAllocationRequest preferredRequest() {
    ContainerPreferredAllocationRequest.Builder c =
        ContainerPreferredAllocationRequest.newBuilder().setAllocationSize(CHOOSE);
    for (int i = 0; i < DEVICES; i++) {
      c.addAvailableDeviceIDs("dev-" + i);
    }
    return PreferredAllocationRequest.newBuilder().addContainerRequests(c).build();
  }

  private static long checkPreferred(
      DevicePluginBlockingStub stub, PreferredAllocationRequest req) {
    long t0 = System.nanoTime();
    PreferredAllocationResponse r =
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).getPreferredAllocation(req);
    long took = System.nanoTime() - t0;
    if (r.getContainerResponsesCount() != 1
        || r.getContainerResponses(0).getDeviceIDsCount() != CHOOSE) {
      throw new IllegalStateException("GetPreferredAllocation answered " + r);
    }
    return took;
  }
}
