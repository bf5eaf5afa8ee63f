package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Sizes;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The {@code observer} scenario with {@code --client=go}: three {@link DeclarativeMain} processes
 * (JVM defaults, 4 devices), two without metrics and one with {@code --metrics}, driven by the Go
 * {@code kubelet-client} in blocks alternating between them. The second process without metrics is
 * the noise floor: two identical processes differ by their JIT's choices and their place on the
 * cores, and a difference between {@code off} and {@code micrometer} smaller than the one between
 * {@code off} and {@code off-again} is not the metrics' cost. Each process's CPU time per call
 * (from {@code /proc/<pid>/stat}, over a second client run after a first that warms every process
 * up) is the steadier measure of that cost.
 */
public final class GoObserver {

  /** Title of the table. */
  public static final String TITLE = "Allocate with metrics off and on, Go client (1 device ID)";

  /** Title of the CPU table. */
  public static final String CPU_TITLE =
      "Plugin CPU per Allocate with metrics off and on, Go client";

  static final String OFF = "off";
  static final String ON = "micrometer";
  static final String OFF_AGAIN = "off-again";
  private static final List<String> PLUGINS = List.of(OFF, ON, OFF_AGAIN);

  private GoObserver() {}

  /**
   * Measures.
   *
   * @param ctx the run
   * @param report where the table and targets go
   * @param go the Go programs
   * @throws Exception when a plugin cannot be started or measured
   */
  public static void run(BenchContext ctx, Report report, GoPrograms go) throws Exception {
    Sizes sizes = ctx.sizes();
    Path dir = ctx.newDir("go-obs");
    String cp = String.join(java.io.File.pathSeparator, MultiResourceScenario.classPath());
    Map<String, JavaProcess> processes = new LinkedHashMap<>();
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir.resolve("p")).start()) {
      Path pd = kubelet.pluginDir();
      Map<String, String> env = Map.of("DEVICE_PLUGIN_DIR", pd.toString());
      try {
        List<String> targets = new ArrayList<>();
        for (String name : PLUGINS) {
          String resource = "bench.example.com/" + name;
          List<String> args = new ArrayList<>();
          args.addAll(List.of("-cp", cp, DeclarativeMain.class.getName(), resource, "4"));
          if (name.equals(ON)) {
            args.add("--metrics");
          }
          JavaProcess p =
              JavaProcess.start(JvmFlags.DEFAULT, args, env, dir.resolve(name + ".log"));
          processes.put(name, p);
          Registration r;
          try {
            r = kubelet.awaitRegistration(resource, GoAllocate.SETUP);
            kubelet.awaitDevices(resource, l -> !l.isEmpty(), GoAllocate.SETUP);
          } catch (RuntimeException e) {
            p.checkAlive("see it register");
            throw new IllegalStateException(
                name + " did not register: " + e.getMessage() + "\n" + p.logTail(30), e);
          }
          String ids =
              kubelet.devices(resource).stream()
                  .map(DeviceState::id)
                  .collect(Collectors.joining(","));
          targets.add("-target=" + name + "=" + pd.resolve(r.endpoint()) + "=" + ids);
        }
        // A first run warms every process up (JIT, buffers); the second is measured, CPU included.
        GoAllocate.client(
            go,
            dir,
            "observer-warm-up",
            "allocate",
            targets,
            sizes.concurrencies(),
            sizes.allocateWarmup(),
            GoAllocate.ROUNDS);
        Map<String, Long> cpuBefore = cpu(processes);
        Map<String, Map<Integer, GoLines.Line>> results =
            GoAllocate.client(
                go,
                dir,
                "observer",
                "allocate",
                targets,
                sizes.concurrencies(),
                sizes.allocateWarmup(),
                sizes.allocateCalls());
        Map<String, Long> cpuAfter = cpu(processes);
        long calls =
            (long) sizes.concurrencies().size() * (sizes.allocateWarmup() + sizes.allocateCalls());
        Map<String, Double> cpuPerCall = new LinkedHashMap<>();
        for (String name : PLUGINS) {
          cpuPerCall.put(name, (cpuAfter.get(name) - cpuBefore.get(name)) / (double) calls);
        }
        table(report, sizes, results, cpuPerCall);
      } finally {
        processes.values().forEach(JavaProcess::close);
      }
    }
  }

  private static Map<String, Long> cpu(Map<String, JavaProcess> processes) {
    Map<String, Long> cpu = new LinkedHashMap<>();
    processes.forEach(
        (name, p) -> {
          p.checkAlive("read its CPU time");
          cpu.put(name, ProcStatus.cpuNanos(p.pid()));
        });
    return cpu;
  }

  private static void table(
      Report report,
      Sizes sizes,
      Map<String, Map<Integer, GoLines.Line>> results,
      Map<String, Double> cpuPerCall) {
    List<List<String>> rows =
        report.table(
            TITLE,
            "Three SDK plugin processes (DeclarativeMain, JVM defaults), the Go kubelet-client"
                + " calling Allocate with one device ID, "
                + Fmt.count(sizes.allocateCalls())
                + " calls per plugin and concurrency in "
                + GoAllocate.ROUNDS
                + " alternating blocks after "
                + Fmt.count(sizes.allocateWarmup())
                + " warm-up calls, in a second client run after a first that warmed every process"
                + " up; latencies in µs. off and off-again: no observer (two identical processes:"
                + " their ratio is the noise floor of one run); micrometer: DevicePluginMetrics"
                + " over a PrometheusMeterRegistry.",
            "concurrency",
            "plugin",
            "calls",
            "p50",
            "p90",
            "p99",
            "max",
            "ops/s");
    for (int c : sizes.concurrencies()) {
      for (String name : PLUGINS) {
        GoLines.Line l = results.get(name).get(c);
        rows.add(
            List.of(
                String.valueOf(c),
                name,
                Fmt.count(Long.parseLong(l.get("calls"))),
                Fmt.us(l.nanos("p50")),
                Fmt.us(l.nanos("p90")),
                Fmt.us(l.nanos("p99")),
                Fmt.us(l.nanos("max")),
                Fmt.count(Math.round(l.number("ops")))));
      }
      GoLines.Line off = results.get(OFF).get(c);
      GoLines.Line offAgain = results.get(OFF_AGAIN).get(c);
      GoLines.Line on = results.get(ON).get(c);
      rows.add(ratioRow(c, "**micrometer / off**", on, off));
      rows.add(ratioRow(c, "**off-again / off** (noise)", offAgain, off));
      double offMean = (off.number("p50") + offAgain.number("p50")) / 2;
      double p50 = on.number("p50") / offMean;
      double noise = offAgain.number("p50") / off.number("p50") - 1;
      if (c == 1 || c == 16) {
        report.target(
            "Go client: metrics cost on Allocate p50 (against the mean of off and off-again),"
                + " concurrency "
                + c,
            "≤ 1.05× off",
            Fmt.ratio(p50) + " (off-again / off: " + Fmt.ratio(1 + noise) + ")",
            p50 <= 1.05);
      }
    }
    List<List<String>> cpuRows =
        report.table(
            CPU_TITLE,
            "The same run: each plugin process's user and system CPU time over the measured"
                + " client run (every concurrency, its warm-up calls included; /proc/<pid>/stat,"
                + " 10 ms ticks) divided by the calls it answered, "
                + Fmt.count(
                    (long) sizes.concurrencies().size()
                        * (sizes.allocateWarmup() + sizes.allocateCalls()))
                + ".",
            "plugin",
            "CPU µs per Allocate",
            "ratio to off");
    for (String name : PLUGINS) {
      cpuRows.add(
          List.of(
              name,
              cpuUs(cpuPerCall.get(name)),
              cpuRatio(cpuPerCall.get(name), cpuPerCall.get(OFF))));
    }
    double offMean = (cpuPerCall.get(OFF) + cpuPerCall.get(OFF_AGAIN)) / 2;
    report.target(
        "Go client: metrics cost in plugin CPU per Allocate (against the mean of off and"
            + " off-again)",
        "≤ 1.05× off",
        cpuRatio(cpuPerCall.get(ON), offMean),
        offMean > 0 && cpuPerCall.get(ON) / offMean <= 1.05);
  }

  /** A ratio of CPU times; too few calls may leave a process under one 10 ms tick. */
  private static String cpuRatio(double a, double b) {
    return b > 0 ? Fmt.ratio(a / b) : "n/a (under one clock tick)";
  }

  private static List<String> ratioRow(int c, String label, GoLines.Line a, GoLines.Line b) {
    return List.of(
        String.valueOf(c),
        label,
        "",
        Fmt.ratio(a.number("p50") / b.number("p50")),
        Fmt.ratio(a.number("p90") / b.number("p90")),
        Fmt.ratio(a.number("p99") / b.number("p99")),
        "",
        Fmt.ratio(a.number("ops") / b.number("ops")));
  }

  private static String cpuUs(double nanos) {
    return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1000);
  }
}
