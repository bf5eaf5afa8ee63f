package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc.DevicePluginBlockingStub;
import io.github.deviceplugin4j.benchmarks.AllocateScenario.Result;
import io.github.deviceplugin4j.benchmarks.process.GoObserver;
import io.github.deviceplugin4j.benchmarks.process.GoPrograms;
import io.github.deviceplugin4j.core.PluginObserver;
import io.github.deviceplugin4j.micrometer.DevicePluginMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What metrics cost on Allocate: two SDK plugins with the same {@code Allocator} backend in the
 * same JVM and run, one without an observer, one with {@link DevicePluginMetrics} over a Prometheus
 * registry (observer and listener, as the example plugins run it). Blocks of calls alternate
 * between the two. {@code --client=go} runs both as separate processes driven by the Go client
 * ({@link GoObserver}).
 */
public final class ObserverScenario implements Scenario {

  /** Title of the table. */
  public static final String TITLE = "Allocate with metrics off and on (1 device ID)";

  static final String OFF = "bench.example.com/off";
  static final String NOOP = "bench.example.com/noop";
  static final String ON = "bench.example.com/micrometer";

  @Override
  public String name() {
    return "observer";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    if (ctx.client() == BenchContext.Client.GO) {
      Optional<GoPrograms> go = GoPrograms.build(ctx);
      if (go.isEmpty()) {
        report.skipped(name() + " --client=go", GoPrograms.missingReason());
        return;
      }
      GoObserver.run(ctx, report, go.get());
      return;
    }
    Sizes sizes = ctx.sizes();
    List<List<String>> rows =
        report.table(
            TITLE,
            "Two SDK plugins with the same Allocator backend in one JVM, over the fake kubelet's"
                + " own Unix-socket connections; "
                + Fmt.count(sizes.allocateCalls())
                + " calls per plugin and concurrency in "
                + AllocateScenario.ROUNDS
                + " alternating blocks after "
                + Fmt.count(sizes.allocateWarmup())
                + " warm-up calls; latencies in µs. off: no observer; noop: an observer that does"
                + " nothing (the core's cost of reporting); micrometer:"
                + " DevicePluginMetrics (observer and listener) over a PrometheusMeterRegistry."
                + " Ratio rows: micrometer / off.",
            "concurrency",
            "plugin",
            "calls",
            "p50",
            "p90",
            "p99",
            "max",
            "ops/s");
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    DevicePluginMetrics metrics = DevicePluginMetrics.of(registry);
    try (Node node = new Node(ctx.newDir("obs"))) {
      node.sdk(AllocateScenario.DEVICES, b -> {}, new BenchBackend(OFF, AllocateScenario.DEVICES));
      node.sdk(
          AllocateScenario.DEVICES,
          b -> b.observer(new PluginObserver() {}),
          new BenchBackend(NOOP, AllocateScenario.DEVICES));
      node.sdk(
          AllocateScenario.DEVICES,
          metrics::bindTo,
          new BenchBackend(ON, AllocateScenario.DEVICES));
      Map<String, DevicePluginBlockingStub> stubs = new LinkedHashMap<>();
      stubs.put(OFF, node.stub(OFF));
      stubs.put(NOOP, node.stub(NOOP));
      stubs.put(ON, node.stub(ON));
      List<AllocateRequest> requests = AllocateScenario.requests();
      for (int concurrency : sizes.concurrencies()) {
        Map<String, Result> results = AllocateScenario.measure(stubs, requests, concurrency, sizes);
        Stats off = results.get(OFF).stats();
        Stats on = results.get(ON).stats();
        rows.add(row(concurrency, "off", results.get(OFF)));
        rows.add(row(concurrency, "noop", results.get(NOOP)));
        rows.add(row(concurrency, "micrometer", results.get(ON)));
        double p50 = (double) on.percentile(50) / off.percentile(50);
        rows.add(
            List.of(
                String.valueOf(concurrency),
                "**micrometer / off**",
                "",
                Fmt.ratio(p50),
                Fmt.ratio((double) on.percentile(90) / off.percentile(90)),
                Fmt.ratio((double) on.percentile(99) / off.percentile(99)),
                "",
                Fmt.ratio(results.get(ON).opsPerSecond() / results.get(OFF).opsPerSecond())));
        if (concurrency == 1 || concurrency == 16) {
          report.target(
              "Metrics cost on Allocate p50, concurrency " + concurrency,
              "≤ 1.05× off",
              Fmt.ratio(p50),
              p50 <= 1.05);
        }
      }
    }
    double counted =
        registry.find("deviceplugin4j.rpc").tag("method", "Allocate").timers().stream()
            .mapToLong(t -> t.count())
            .sum();
    long expected =
        (long) sizes.concurrencies().size()
            * (sizes.allocateWarmup()
                + sizes.allocateCalls() / AllocateScenario.ROUNDS * AllocateScenario.ROUNDS);
    if (counted < expected) {
      throw new IllegalStateException(
          "the metrics counted " + counted + " Allocate calls of at least " + expected + " made");
    }
  }

  private static List<String> row(int concurrency, String label, Result r) {
    Stats s = r.stats();
    return List.of(
        String.valueOf(concurrency),
        label,
        Fmt.count(s.count()),
        Fmt.us(s.percentile(50)),
        Fmt.us(s.percentile(90)),
        Fmt.us(s.percentile(99)),
        Fmt.us(s.max()),
        Fmt.count(Math.round(r.opsPerSecond())));
  }
}
