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
 * {@code kubelet-client} in blocks alternating between them, measured in a second client run after
 * a first that warms every process up. The second process without metrics is the noise floor of the
 * run: a difference between {@code off} and {@code micrometer} smaller than the one between {@code
 * off} and {@code off-again} is not the metrics' cost. The processes are pinned ({@link Pinning}).
 */
public final class GoObserver {

  /** Title of the table. */
  public static final String TITLE = "Allocate with metrics off and on, Go client (1 device ID)";

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
    Pinning pin = Pinning.detect();
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
          List<String> cmd = new ArrayList<>(pin.plugins());
          cmd.add(JavaProcess.javaBinary());
          cmd.addAll(pin.jvmFlags());
          cmd.addAll(args);
          JavaProcess p = JavaProcess.exec(cmd, env, dir.resolve(name + ".log"));
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
        // A first run warms every process up (JIT, buffers); the second is measured.
        GoAllocate.client(
            go,
            dir,
            "observer-warm-up",
            "allocate",
            targets,
            sizes.concurrencies(),
            sizes.allocateWarmup(),
            GoAllocate.ROUNDS,
            pin.client());
        Map<String, Map<Integer, GoLines.Line>> results =
            GoAllocate.client(
                go,
                dir,
                "observer",
                "allocate",
                targets,
                sizes.concurrencies(),
                sizes.allocateWarmup(),
                sizes.allocateCalls(),
                pin.client());
        table(report, sizes, results, pin);
      } finally {
        processes.values().forEach(JavaProcess::close);
      }
    }
  }

  private static void table(
      Report report, Sizes sizes, Map<String, Map<Integer, GoLines.Line>> results, Pinning pin) {
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
                + " over a PrometheusMeterRegistry. "
                + pin.description(),
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

  /**
   * Where the processes run. Identical plugin processes differed by up to 70 % at p50 (concurrency
   * 1) when the scheduler placed them freely, and the first one started was favoured: on a machine
   * of 2 or more cores, every plugin process is pinned to the last core (only one of them is called
   * at a time: the blocks alternate) and the Go client to the others, with the plugins' JVM sizing
   * itself for every core as unpinned ({@code -XX:ActiveProcessorCount}).
   */
  record Pinning(List<String> plugins, List<String> client, List<String> jvmFlags) {

    static Pinning detect() {
      int cores = Runtime.getRuntime().availableProcessors();
      Path taskset = Path.of("/usr/bin/taskset");
      if (cores < 2 || !java.nio.file.Files.isExecutable(taskset)) {
        return new Pinning(List.of(), List.of(), List.of());
      }
      String last = String.valueOf(cores - 1);
      String others = cores == 2 ? "0" : "0-" + (cores - 2);
      return new Pinning(
          List.of(taskset.toString(), "-c", last),
          List.of(taskset.toString(), "-c", others),
          List.of("-XX:ActiveProcessorCount=" + cores));
    }

    String description() {
      return plugins.isEmpty()
          ? "Processes not pinned (no taskset or one core): expect a wide noise floor."
          : "Every plugin process pinned to core "
              + plugins.get(2)
              + " and the Go client to "
              + client.get(2)
              + " (taskset), so the scheduler's placement does not favour one process.";
    }
  }
}
