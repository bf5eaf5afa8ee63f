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
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The {@code observer} scenario with {@code --client=go}: two {@link DeclarativeMain} processes
 * (JVM defaults, 4 devices), one without metrics and one with {@code --metrics}, driven by the Go
 * {@code kubelet-client} in blocks alternating between them.
 */
public final class GoObserver {

  /** Title of the table. */
  public static final String TITLE = "Allocate with metrics off and on, Go client (1 device ID)";

  static final String OFF = "off";
  static final String ON = "micrometer";

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
    List<JavaProcess> processes = new ArrayList<>();
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir.resolve("p")).start()) {
      Path pd = kubelet.pluginDir();
      Map<String, String> env = Map.of("DEVICE_PLUGIN_DIR", pd.toString());
      try {
        List<String> targets = new ArrayList<>();
        for (String name : List.of(OFF, ON)) {
          String resource = "bench.example.com/" + name;
          List<String> args = new ArrayList<>();
          args.addAll(List.of("-cp", cp, DeclarativeMain.class.getName(), resource, "4"));
          if (name.equals(ON)) {
            args.add("--metrics");
          }
          JavaProcess p =
              JavaProcess.start(JvmFlags.DEFAULT, args, env, dir.resolve(name + ".log"));
          processes.add(p);
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
        table(report, sizes, results);
      } finally {
        processes.forEach(JavaProcess::close);
      }
    }
  }

  private static void table(
      Report report, Sizes sizes, Map<String, Map<Integer, GoLines.Line>> results) {
    List<List<String>> rows =
        report.table(
            TITLE,
            "Two SDK plugin processes (DeclarativeMain, JVM defaults), the Go kubelet-client"
                + " calling Allocate with one device ID, "
                + Fmt.count(sizes.allocateCalls())
                + " calls per plugin and concurrency in "
                + GoAllocate.ROUNDS
                + " alternating blocks after "
                + Fmt.count(sizes.allocateWarmup())
                + " warm-up calls; latencies in µs. off: no observer; micrometer:"
                + " DevicePluginMetrics over a PrometheusMeterRegistry. Ratio rows: micrometer /"
                + " off.",
            "concurrency",
            "plugin",
            "calls",
            "p50",
            "p90",
            "p99",
            "max",
            "ops/s");
    for (int c : sizes.concurrencies()) {
      GoLines.Line off = results.get(OFF).get(c);
      GoLines.Line on = results.get(ON).get(c);
      for (String name : List.of(OFF, ON)) {
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
      double p50 = on.number("p50") / off.number("p50");
      rows.add(
          List.of(
              String.valueOf(c),
              "**micrometer / off**",
              "",
              Fmt.ratio(p50),
              Fmt.ratio(on.number("p90") / off.number("p90")),
              Fmt.ratio(on.number("p99") / off.number("p99")),
              "",
              Fmt.ratio(on.number("ops") / off.number("ops"))));
      if (c == 1 || c == 16) {
        report.target(
            "Go client: metrics cost on Allocate p50, concurrency " + c,
            "≤ 1.05× off",
            Fmt.ratio(p50),
            p50 <= 1.05);
      }
    }
  }
}
