package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Sizes;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The {@code allocate} scenario with {@code --client=go}: every plugin a separate process, driven
 * by the Go {@code kubelet-client} (grpc-go, dialed like the kubelet's device manager endpoint),
 * blocks alternating between the plugins, and Java / Go ratio rows in the same run. The plugins
 * register with the harness's fake kubelet, which gives their sockets and device IDs:
 *
 * <ul>
 *   <li>{@code go-stub}: the Go {@code stub-plugin} (grpc-go), 4 devices;
 *   <li>{@code sdk-declarative}: {@link DeclarativeMain} (the SDK, no Allocator), 4 devices, JVM
 *       defaults;
 *   <li>{@code fpga-example}: the FPGA example jar (2 devices) as its image runs ({@link
 *       GoFlags#shipped});
 *   <li>{@code baseline}: {@link BaselineMain} (grpc-java, no SDK), 4 devices, JVM defaults.
 * </ul>
 */
public final class GoAllocate {

  /** Title of the Allocate table. */
  public static final String TITLE = "Allocate through the kubelet's Go client (1 device ID)";

  /** Title of the admit table. */
  public static final String ADMIT = "Admit path through the kubelet's Go client";

  static final String GO = "go-stub";
  static final String DECLARATIVE = "sdk-declarative";
  static final String FPGA = "fpga-example";
  static final String BASELINE = "baseline";
  static final int DEVICES = 4;
  static final int ROUNDS = 4;
  static final Duration SETUP = Duration.ofSeconds(60);

  private GoAllocate() {}

  /** One plugin process under test: its name, resource and flags as the table shows them. */
  private record Plugin(String name, String resource, String flags, JavaProcess process) {}

  /**
   * Measures.
   *
   * @param ctx the run
   * @param report where tables and targets go
   * @param go the Go programs
   * @throws Exception when a plugin cannot be started or measured
   */
  public static void run(BenchContext ctx, Report report, GoPrograms go) throws Exception {
    Sizes sizes = ctx.sizes();
    Path dir = ctx.newDir("ga");
    FpgaNode node = new FpgaNode(ctx.newDir("n"), ctx.exampleJar("fpga"));
    JvmFlags.FlagSet image = GoFlags.shipped(ctx, node.jar());
    String cp = String.join(java.io.File.pathSeparator, MultiResourceScenario.classPath());
    List<Plugin> plugins = new ArrayList<>();
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir.resolve("p")).start()) {
      Path pd = kubelet.pluginDir();
      Map<String, String> env = Map.of("DEVICE_PLUGIN_DIR", pd.toString());
      try {
        plugins.add(
            new Plugin(
                GO,
                "bench.example.com/go",
                "(native)",
                JavaProcess.exec(
                    List.of(
                        go.stubPlugin().toString(),
                        "-dir=" + pd,
                        "-socket=go.sock",
                        "-resource=bench.example.com/go",
                        "-devices=" + DEVICES,
                        "-register"),
                    Map.of(),
                    dir.resolve("go.log"))));
        plugins.add(
            new Plugin(
                DECLARATIVE,
                "bench.example.com/declarative",
                "JVM defaults",
                JavaProcess.start(
                    JvmFlags.DEFAULT,
                    List.of(
                        "-cp",
                        cp,
                        DeclarativeMain.class.getName(),
                        "bench.example.com/declarative",
                        Integer.toString(DEVICES)),
                    env,
                    dir.resolve("declarative.log"))));
        plugins.add(
            new Plugin(
                FPGA,
                FpgaNode.RESOURCE,
                image.name(),
                node.start(image, pd, null, ctx.newDir("f"))));
        plugins.add(
            new Plugin(
                BASELINE,
                "bench.example.com/baseline",
                "JVM defaults",
                JavaProcess.start(
                    JvmFlags.DEFAULT,
                    List.of(
                        "-cp",
                        cp,
                        BaselineMain.class.getName(),
                        pd.toString(),
                        "baseline.sock",
                        "bench.example.com/baseline",
                        Integer.toString(DEVICES)),
                    Map.of(),
                    dir.resolve("baseline.log"))));
        List<String> targets = new ArrayList<>();
        for (Plugin p : plugins) {
          Registration r;
          try {
            r = kubelet.awaitRegistration(p.resource(), SETUP);
            kubelet.awaitDevices(p.resource(), l -> !l.isEmpty(), SETUP);
          } catch (RuntimeException e) {
            p.process().checkAlive("see it register");
            throw new IllegalStateException(
                p.name() + " did not register: " + e.getMessage() + "\n" + p.process().logTail(30),
                e);
          }
          String ids =
              kubelet.devices(p.resource()).stream()
                  .map(DeviceState::id)
                  .collect(Collectors.joining(","));
          targets.add("-target=" + p.name() + "=" + pd.resolve(r.endpoint()) + "=" + ids);
        }
        Map<String, Map<Integer, GoLines.Line>> allocate =
            client(
                go,
                dir,
                "allocate",
                targets,
                sizes.concurrencies(),
                sizes.allocateWarmup(),
                sizes.allocateCalls());
        allocateTable(report, sizes, plugins, allocate);
        Map<String, Map<Integer, GoLines.Line>> admit =
            client(go, dir, "admit", targets, List.of(1), sizes.admitCalls(), sizes.admitCalls());
        admitTable(report, sizes, plugins, admit);
      } finally {
        plugins.forEach(p -> p.process().close());
      }
    }
  }

  /** Runs the Go client once; results by target and concurrency. */
  static Map<String, Map<Integer, GoLines.Line>> client(
      GoPrograms go,
      Path dir,
      String mode,
      List<String> targets,
      List<Integer> concurrencies,
      int warmup,
      int calls)
      throws Exception {
    return client(go, dir, mode, mode, targets, concurrencies, warmup, calls, List.of());
  }

  /**
   * Runs the Go client once, its output in {@code client-<label>.log}, its command after {@code
   * prefix} (a {@code taskset} pinning it, say).
   */
  static Map<String, Map<Integer, GoLines.Line>> client(
      GoPrograms go,
      Path dir,
      String label,
      String mode,
      List<String> targets,
      List<Integer> concurrencies,
      int warmup,
      int calls,
      List<String> prefix)
      throws Exception {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.add(go.kubeletClient().toString());
    cmd.addAll(targets);
    cmd.add("-mode=" + mode);
    cmd.add(
        "-concurrency="
            + concurrencies.stream().map(String::valueOf).collect(Collectors.joining(",")));
    cmd.add("-warmup=" + warmup);
    cmd.add("-calls=" + calls);
    cmd.add("-rounds=" + ROUNDS);
    Path log = dir.resolve("client-" + label + ".log");
    JavaProcess p = JavaProcess.exec(cmd, Map.of(), log);
    String out = GoLines.awaitSuccess(p, log, Duration.ofMinutes(30));
    Map<String, Map<Integer, GoLines.Line>> results = new LinkedHashMap<>();
    for (GoLines.Line l : GoLines.parse(out, "result")) {
      results
          .computeIfAbsent(l.get("target"), t -> new LinkedHashMap<>())
          .put(Integer.parseInt(l.get("concurrency")), l);
    }
    return results;
  }

  private static List<String> columns() {
    return List.of(
        "concurrency",
        "plugin",
        "JVM flags",
        "calls",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "ops/s");
  }

  private static List<String> admitColumns() {
    List<String> cols = new ArrayList<>(columns());
    cols.add(3, "RPCs");
    return cols;
  }

  private static void allocateTable(
      Report report,
      Sizes sizes,
      List<Plugin> plugins,
      Map<String, Map<Integer, GoLines.Line>> results) {
    List<String> cols = columns();
    List<List<String>> rows =
        report.table(
            TITLE,
            "Each plugin a separate process; the Go kubelet-client (grpc-go, one connection per"
                + " plugin dialed like the kubelet's device manager: blocking, insecure, unix"
                + " dialer, authority localhost) calls Allocate with one device ID, "
                + Fmt.count(sizes.allocateCalls())
                + " calls per plugin and concurrency in "
                + ROUNDS
                + " blocks alternating between the plugins after "
                + Fmt.count(sizes.allocateWarmup())
                + " warm-up calls; latencies in µs. go-stub: a minimal grpc-go plugin;"
                + " sdk-declarative: the SDK with no Allocator; fpga-example: the FPGA example jar"
                + " as its image runs (JDK 25: its Dockerfile's flags and AOT cache; without a JDK"
                + " 25, the JDK 17 images' flags and AppCDS archive); baseline: hand-written grpc-java"
                + " plugin. Ratio rows: plugin / go-stub.",
            cols.toArray(String[]::new));
    for (int c : sizes.concurrencies()) {
      GoLines.Line go = results.get(GO).get(c);
      for (Plugin p : plugins) {
        rows.add(row(c, p, results.get(p.name()).get(c)));
      }
      for (Plugin p : plugins) {
        if (p.name().equals(GO)) {
          continue;
        }
        GoLines.Line l = results.get(p.name()).get(c);
        rows.add(ratioRow(c, "**" + p.name() + " / go-stub**", l, go));
      }
      if (c == 1 || c == 16) {
        GoLines.Line fpga = results.get(FPGA).get(c);
        double p50 = fpga.number("p50") / go.number("p50");
        double p99 = fpga.number("p99") / go.number("p99");
        report.target(
            "Go client: FPGA example (image flags) Allocate p50, concurrency " + c,
            "≤ 0.85× Go stub",
            Fmt.ratio(p50),
            p50 <= 0.85);
        report.target(
            "Go client: FPGA example (image flags) Allocate p99, concurrency " + c,
            "≤ 1.0× Go stub",
            Fmt.ratio(p99),
            p99 <= 1.0);
        if (c == 16) {
          double ops = fpga.number("ops") / go.number("ops");
          report.target(
              "Go client: FPGA example (image flags) throughput, concurrency 16",
              "≥ 1.2× Go stub",
              Fmt.ratio(ops),
              ops >= 1.2);
        }
      }
    }
  }

  private static void admitTable(
      Report report,
      Sizes sizes,
      List<Plugin> plugins,
      Map<String, Map<Integer, GoLines.Line>> results) {
    List<List<String>> rows =
        report.table(
            ADMIT,
            "The kubelet's admit path for one device, through the same Go client and processes:"
                + " GetPreferredAllocation (when the plugin offers it), Allocate, PreStartContainer"
                + " (when required), concurrency 1, "
                + Fmt.count(sizes.admitCalls())
                + " admits per plugin after as many warm-up admits; latencies in µs. RPCs: calls"
                + " to the plugin per admit (sdk-declarative offers neither preferred allocation"
                + " nor pre-start, so its admit is one Allocate). Ratio rows: plugin / go-stub.",
            admitColumns().toArray(String[]::new));
    GoLines.Line go = results.get(GO).get(1);
    for (Plugin p : plugins) {
      GoLines.Line l = results.get(p.name()).get(1);
      List<String> row = new ArrayList<>(row(1, p, l));
      row.add(3, l.get("rpcs"));
      rows.add(row);
    }
    for (Plugin p : plugins) {
      if (!p.name().equals(GO)) {
        List<String> row =
            new ArrayList<>(
                ratioRow(1, "**" + p.name() + " / go-stub**", results.get(p.name()).get(1), go));
        row.add(3, "");
        rows.add(row);
      }
    }
  }

  private static List<String> row(int c, Plugin p, GoLines.Line l) {
    return List.of(
        String.valueOf(c),
        p.name(),
        p.flags(),
        Fmt.count(Long.parseLong(l.get("calls"))),
        Fmt.us(l.nanos("p50")),
        Fmt.us(l.nanos("p90")),
        Fmt.us(l.nanos("p99")),
        Fmt.us(l.nanos("p999")),
        Fmt.us(l.nanos("max")),
        Fmt.count(Math.round(l.number("ops"))));
  }

  private static List<String> ratioRow(int c, String label, GoLines.Line l, GoLines.Line go) {
    return List.of(
        String.valueOf(c),
        label,
        "",
        "",
        Fmt.ratio(l.number("p50") / go.number("p50")),
        Fmt.ratio(l.number("p90") / go.number("p90")),
        Fmt.ratio(l.number("p99") / go.number("p99")),
        Fmt.ratio(l.number("p999") / go.number("p999")),
        "",
        Fmt.ratio(l.number("ops") / go.number("ops")));
  }
}
