package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc.DevicePluginBlockingStub;
import io.github.deviceplugin4j.benchmarks.process.GoAllocate;
import io.github.deviceplugin4j.benchmarks.process.GoPrograms;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Allocate round trips with one device ID over the kubelet's own connection, at each concurrency,
 * against three plugins in the same JVM and run: the SDK with an {@code Allocator} backend, the SDK
 * with a declarative backend (devices carry their device nodes and env; no backend call), and the
 * hand-written baseline. Blocks of calls alternate between the plugins so that drift on the machine
 * hits all of them alike.
 */
public final class AllocateScenario implements Scenario {

  static final int DEVICES = 64;
  static final int ROUNDS = 4;
  static final String SDK = "bench.example.com/sdk";
  static final String DECLARATIVE = "bench.example.com/declarative";
  static final String BASELINE = "bench.example.com/baseline";

  @Override
  public String name() {
    return "allocate";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    if (ctx.client() == BenchContext.Client.GO) {
      Optional<GoPrograms> go = GoPrograms.build(ctx);
      if (go.isEmpty()) {
        report.skipped(name() + " --client=go", GoPrograms.missingReason());
        return;
      }
      GoAllocate.run(ctx, report, go.get());
      return;
    }
    Sizes sizes = ctx.sizes();
    List<List<String>> rows =
        report.table(
            "Allocate round trip (1 device ID)",
            "Over the fake kubelet's own Unix-socket connection to each plugin, "
                + Fmt.count(sizes.allocateCalls())
                + " calls per plugin and concurrency after "
                + Fmt.count(sizes.allocateWarmup())
                + " warm-up calls; latencies in µs. sdk: an Allocator backend;"
                + " sdk-declarative: no Allocator, the core answers from the devices;"
                + " baseline: hand-written grpc-java plugin, no SDK. Ratio rows: sdk / baseline.",
            "concurrency",
            "plugin",
            "calls",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "ops/s");
    try (Node node = new Node(ctx.newDir("alloc"))) {
      node.sdk(DEVICES, new BenchBackend(SDK, DEVICES));
      node.sdk(DEVICES, new DeclarativeBackend(DECLARATIVE, DEVICES));
      node.baseline(BASELINE, DEVICES);
      Map<String, DevicePluginBlockingStub> stubs = new LinkedHashMap<>();
      for (String r : List.of(SDK, DECLARATIVE, BASELINE)) {
        stubs.put(r, node.stub(r));
      }
      List<AllocateRequest> requests = requests();
      check(stubs, requests);
      for (int concurrency : sizes.concurrencies()) {
        Map<String, Result> results = measure(stubs, requests, concurrency, sizes);
        for (Map.Entry<String, Result> e : results.entrySet()) {
          Stats s = e.getValue().stats;
          rows.add(
              List.of(
                  String.valueOf(concurrency),
                  label(e.getKey()),
                  Fmt.count(s.count()),
                  Fmt.us(s.percentile(50)),
                  Fmt.us(s.percentile(90)),
                  Fmt.us(s.percentile(99)),
                  Fmt.us(s.percentile(99.9)),
                  Fmt.us(s.max()),
                  Fmt.count(Math.round(e.getValue().opsPerSecond))));
        }
        Result sdk = results.get(SDK);
        Result base = results.get(BASELINE);
        double p50 = (double) sdk.stats.percentile(50) / base.stats.percentile(50);
        double p99 = (double) sdk.stats.percentile(99) / base.stats.percentile(99);
        rows.add(
            List.of(
                String.valueOf(concurrency),
                "**sdk / baseline**",
                "",
                Fmt.ratio(p50),
                Fmt.ratio((double) sdk.stats.percentile(90) / base.stats.percentile(90)),
                Fmt.ratio(p99),
                Fmt.ratio((double) sdk.stats.percentile(99.9) / base.stats.percentile(99.9)),
                "",
                Fmt.ratio(sdk.opsPerSecond / base.opsPerSecond)));
        if (concurrency == 1 || concurrency == 16) {
          report.target(
              "SDK overhead on Allocate p50, concurrency " + concurrency,
              "≤ 1.15× baseline",
              Fmt.ratio(p50),
              p50 <= 1.15);
          report.target(
              "SDK overhead on Allocate p99, concurrency " + concurrency,
              "≤ 1.15× baseline",
              Fmt.ratio(p99),
              p99 <= 1.15);
        }
        if (concurrency == 1) {
          long p99Nanos = sdk.stats.percentile(99);
          report.target(
              "Allocate p99, concurrency 1",
              "≤ 500 µs",
              Fmt.us(p99Nanos) + " µs",
              p99Nanos <= 500_000);
        }
        if (concurrency == 16) {
          report.target(
              "Allocate throughput, concurrency 16",
              "≥ 10,000 ops/s",
              Fmt.count(Math.round(sdk.opsPerSecond)) + " ops/s",
              sdk.opsPerSecond >= 10_000);
        }
      }
    }
  }

  private static String label(String resource) {
    return switch (resource) {
      case SDK -> "sdk";
      case DECLARATIVE -> "sdk-declarative";
      default -> "baseline";
    };
  }

  record Result(Stats stats, double opsPerSecond) {}

  static Map<String, Result> measure(
      Map<String, DevicePluginBlockingStub> stubs,
      List<AllocateRequest> requests,
      int concurrency,
      Sizes sizes)
      throws Exception {
    for (DevicePluginBlockingStub stub : stubs.values()) {
      Load.run(concurrency, sizes.allocateWarmup(), i -> call(stub, requests, i), null, 0);
    }
    int perRound = sizes.allocateCalls() / ROUNDS;
    Map<String, long[]> latencies = new LinkedHashMap<>();
    Map<String, Long> wall = new LinkedHashMap<>();
    stubs.keySet().forEach(r -> latencies.put(r, new long[perRound * ROUNDS]));
    List<String> order = new ArrayList<>(stubs.keySet());
    for (int round = 0; round < ROUNDS; round++) {
      for (String r : order) {
        DevicePluginBlockingStub stub = stubs.get(r);
        long took =
            Load.run(
                concurrency,
                perRound,
                i -> call(stub, requests, i),
                latencies.get(r),
                round * perRound);
        wall.merge(r, took, Long::sum);
      }
      java.util.Collections.reverse(order); // who goes first alternates
    }
    Map<String, Result> results = new LinkedHashMap<>();
    for (String r : stubs.keySet()) {
      results.put(
          r, new Result(Stats.of(latencies.get(r)), perRound * ROUNDS / (wall.get(r) / 1e9)));
    }
    return results;
  }

  private static void call(DevicePluginBlockingStub stub, List<AllocateRequest> requests, int i) {
    AllocateResponse r =
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).allocate(requests.get(i % requests.size()));
    if (r.getContainerResponsesCount() != 1) {
      throw new IllegalStateException(
          "Allocate answered "
              + r.getContainerResponsesCount()
              + " container responses for one container request");
    }
  }

  /** One request per device, built once: the client's cost is the same for every plugin. */
  static List<AllocateRequest> requests() {
    List<AllocateRequest> list = new ArrayList<>(DEVICES);
    for (int i = 0; i < DEVICES; i++) {
      list.add(
          AllocateRequest.newBuilder()
              .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds("dev-" + i))
              .build());
    }
    return list;
  }

  /** Every plugin must answer the same: the device node and the env naming the device. */
  private static void check(
      Map<String, DevicePluginBlockingStub> stubs, List<AllocateRequest> requests) {
    for (Map.Entry<String, DevicePluginBlockingStub> e : stubs.entrySet()) {
      var c =
          e.getValue()
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .allocate(requests.get(3))
              .getContainerResponses(0);
      if (c.getDevicesCount() != 1
          || !c.getDevices(0).getHostPath().equals("/dev/dev-3")
          || !"dev-3".equals(c.getEnvsMap().get(BaselinePlugin.ENV))) {
        throw new IllegalStateException(
            label(e.getKey()) + " answers differently from the others: " + c);
      }
    }
  }
}
