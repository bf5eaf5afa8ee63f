package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Stats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code restart} scenario with {@code --client=go}: the Go {@code fake-kubelet} (grpc-go, the
 * kubelet's registration steps) restarts {@code n} times like the kubelet (stop, close every plugin
 * connection, delete every socket in the directory, serve kubelet.sock again) and times each step
 * of the plugin's re-registration from the moment kubelet.sock is served: Register received,
 * GetDevicePluginOptions answered (the kubelet answers Register right after), first ListAndWatch
 * list received. Plugins: the FPGA example jar as its image runs ({@link GoFlags#shipped}; legacy
 * registration), and the Go stub plugin (inotify on the directory).
 */
public final class GoRestart {

  /** Title of the table. */
  public static final String TITLE = "Kubelet restart → re-registered, through a Go kubelet";

  static final int WARM_UP = 5;

  /**
   * Idle time before each restart. A real kubelet's restart takes seconds, and the plugin is idle
   * meanwhile; restarting back to back measured a plugin that had not finished reacting to the
   * previous restart (its standby server not yet bound again), which no node sees.
   */
  static final String PAUSE = "200ms";

  private GoRestart() {}

  /**
   * Per-step statistics of one plugin's restarts.
   *
   * @param register served → Register received
   * @param options Register received → GetDevicePluginOptions answered
   * @param list options answered → first list received
   * @param total served → first list received
   * @param inOrder served → first list received of every restart, the warm-up ones first, in order
   */
  record Steps(Stats register, Stats options, Stats list, Stats total, long[] inOrder) {}

  /** Title of the second table: the whole restart, in the order the restarts came. */
  public static final String IN_ORDER_TITLE =
      "Kubelet restart → re-registered, through a Go kubelet, in order";

  /** Columns of the second table: the run's restarts in this many groups. */
  static final int GROUPS = 8;

  /**
   * Measures.
   *
   * @param ctx the run
   * @param report where the table and targets go
   * @param go the Go programs
   * @throws Exception when a plugin cannot be started or measured
   */
  public static void run(BenchContext ctx, Report report, GoPrograms go) throws Exception {
    int n = ctx.sizes().restarts();
    FpgaNode node = new FpgaNode(ctx.newDir("n"), ctx.exampleJar("fpga"));
    JvmFlags.FlagSet image = GoFlags.shipped(ctx, node.jar());
    List<List<String>> rows =
        report.table(
            TITLE,
            "The Go fake-kubelet (grpc-go) restarts like the kubelet: stops serving, closes its"
                + " connections, deletes every socket in the plugin directory, serves kubelet.sock"
                + " again. Per restart, from kubelet.sock served: → Register received, Register →"
                + " GetDevicePluginOptions answered (dial-back included; the kubelet answers"
                + " Register right after), options → first ListAndWatch list received, and the"
                + " whole. "
                + n
                + " restarts per plugin after "
                + WARM_UP
                + " warm-up restarts, each after "
                + PAUSE
                + " of idle (a kubelet is down for seconds when it restarts; back to back, the"
                + " plugin would never be idle between restarts); ms. fpga-example: the FPGA example"
                + " jar as its image runs ("
                + image.name()
                + "), legacy registration; go-stub: grpc-go plugin re-registering on"
                + " inotify's create event of kubelet.sock.",
            "plugin",
            "restarts",
            "→ Register p50",
            "p90",
            "max",
            "→ options p50",
            "p90",
            "max",
            "→ first list p50",
            "p90",
            "max",
            "served → listed p50",
            "p90",
            "p99",
            "max");
    Steps fpga = null;
    Map<String, Steps> all = new LinkedHashMap<>();
    for (String plugin : List.of(GoAllocate.FPGA, GoAllocate.GO)) {
      Path dir = ctx.newDir("gr");
      Steps s = measure(ctx, go, plugin, dir, node, image, n);
      all.put(plugin, s);
      if (plugin.equals(GoAllocate.FPGA)) {
        fpga = s;
      }
      rows.add(
          List.of(
              plugin,
              Fmt.count(n),
              Fmt.ms(s.register().percentile(50)),
              Fmt.ms(s.register().percentile(90)),
              Fmt.ms(s.register().max()),
              Fmt.ms(s.options().percentile(50)),
              Fmt.ms(s.options().percentile(90)),
              Fmt.ms(s.options().max()),
              Fmt.ms(s.list().percentile(50)),
              Fmt.ms(s.list().percentile(90)),
              Fmt.ms(s.list().max()),
              Fmt.ms(s.total().percentile(50)),
              Fmt.ms(s.total().percentile(90)),
              Fmt.ms(s.total().percentile(99)),
              Fmt.ms(s.total().max())));
    }
    inOrder(report, all, n);
    report.target(
        "Go kubelet: FPGA example (image flags) restart → listed p50",
        "≤ 5 ms",
        Fmt.ms(fpga.total().percentile(50)) + " ms",
        fpga.total().percentile(50) <= 5_000_000L);
    report.target(
        "Go kubelet: FPGA example (image flags) restart → listed p99",
        "≤ 20 ms",
        Fmt.ms(fpga.total().percentile(99)) + " ms",
        fpga.total().percentile(99) <= 20_000_000L);
  }

  /**
   * Every restart, served → listed: the first alone, the other warm-up restarts, then the measured
   * ones in groups. The code a restart runs, runs once per restart: the JIT compiles it after a few
   * hundred restarts, so the later groups show compiled code, and the first ones what a node sees,
   * whose kubelet restarts a few times in its life.
   */
  private static void inOrder(Report report, Map<String, Steps> all, int n) {
    int group = Math.max(1, n / GROUPS);
    // Column bounds, 0-based and exclusive: [0, 1), [1, WARM_UP), then groups of the measured.
    List<int[]> columns = new ArrayList<>();
    columns.add(new int[] {0, 1});
    columns.add(new int[] {1, WARM_UP});
    for (int from = WARM_UP; from < WARM_UP + n; from += group) {
      columns.add(new int[] {from, Math.min(WARM_UP + n, from + group)});
    }
    List<String> headers = new ArrayList<>();
    headers.add("plugin");
    for (int[] c : columns) {
      headers.add(c[1] - c[0] == 1 ? String.valueOf(c[1]) : (c[0] + 1) + "-" + c[1]);
    }
    List<List<String>> rows =
        report.table(
            IN_ORDER_TITLE,
            "Every restart in the order it came: restart 1, "
                + PAUSE
                + " after the plugin's first registration (still starting: its warm-up and the"
                + " JIT's start-up compilations run), and the other warm-up restarts, then those"
                + " of the table above; served → listed p50 of each column; ms.",
            headers.toArray(String[]::new));
    for (Map.Entry<String, Steps> e : all.entrySet()) {
      List<String> row = new ArrayList<>();
      row.add(e.getKey());
      long[] t = e.getValue().inOrder();
      for (int[] c : columns) {
        row.add(Fmt.ms(Stats.of(Arrays.copyOfRange(t, c[0], c[1])).percentile(50)));
      }
      rows.add(row);
    }
  }

  /** Runs the Go fake kubelet with one plugin; the plugin starts once kubelet.sock is served. */
  static Steps measure(
      BenchContext ctx,
      GoPrograms go,
      String plugin,
      Path dir,
      FpgaNode node,
      JvmFlags.FlagSet image,
      int restarts)
      throws Exception {
    Path pd = dir.resolve("p");
    Path log = dir.resolve("kubelet.log");
    try (JavaProcess kubelet =
        JavaProcess.exec(
            List.of(
                go.fakeKubelet().toString(),
                "-dir=" + pd,
                // The warm-up restarts are measured too, for the in-order table: the fake
                // kubelet's own warm-up would not print them.
                "-restarts=" + (WARM_UP + restarts),
                "-warmup=0",
                "-pause=" + PAUSE),
            Map.of(),
            log)) {
      GoLines.awaitFile(pd.resolve("kubelet.sock"), kubelet, GoAllocate.SETUP);
      try (JavaProcess p =
          plugin.equals(GoAllocate.GO)
              ? JavaProcess.exec(
                  List.of(
                      go.stubPlugin().toString(),
                      "-dir=" + pd,
                      "-socket=go.sock",
                      "-resource=bench.example.com/go",
                      "-devices=" + GoAllocate.DEVICES,
                      "-register"),
                  Map.of(),
                  dir.resolve("go.log"))
              : node.start(image, pd, null, ctx.newDir("f"))) {
        String out;
        try {
          out = GoLines.awaitSuccess(kubelet, log, Duration.ofMinutes(10));
        } catch (IllegalStateException e) {
          throw new IllegalStateException(
              e.getMessage() + "\nplugin " + plugin + ":\n" + p.logTail(30), e);
        }
        List<GoLines.Line> lines = GoLines.parse(out, "restart");
        if (lines.size() != WARM_UP + restarts) {
          throw new IllegalStateException(
              "the Go fake kubelet reported "
                  + lines.size()
                  + " restarts of "
                  + (WARM_UP + restarts)
                  + "\n"
                  + out);
        }
        long[] register = new long[restarts];
        long[] options = new long[restarts];
        long[] list = new long[restarts];
        long[] total = new long[restarts];
        long[] inOrder = new long[WARM_UP + restarts];
        for (int i = 0; i < WARM_UP + restarts; i++) {
          GoLines.Line l = lines.get(i);
          inOrder[i] = l.nanos("list");
          if (i >= WARM_UP) {
            register[i - WARM_UP] = l.nanos("register");
            options[i - WARM_UP] = l.nanos("options") - l.nanos("register");
            list[i - WARM_UP] = l.nanos("list") - l.nanos("options");
            total[i - WARM_UP] = l.nanos("list");
          }
        }
        return new Steps(
            Stats.of(register), Stats.of(options), Stats.of(list), Stats.of(total), inOrder);
      }
    }
  }
}
