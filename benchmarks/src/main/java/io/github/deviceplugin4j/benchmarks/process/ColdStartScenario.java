package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import io.github.deviceplugin4j.benchmarks.Stats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Cold start of the FPGA example's runnable jar, measured from outside its JVM: process start
 * (right before {@link ProcessBuilder#start()}) → the fake kubelet accepted the registration → it
 * received the first device list → the first Allocate (a full kubelet admit of one device, issued
 * as soon as the devices are listed) answered. Flag sets: JVM defaults, the recommended flags
 * ({@link JvmFlags#RECOMMENDED}), and the recommended flags with an application CDS archive trained
 * with the fake kubelet or by the image build's {@code CdsTraining} run ({@link AppCds}); all in
 * legacy registration mode, and the recommended flags without and with the image-build archive once
 * more in plugin-watcher mode (what the example DaemonSets use: they mount the plugins registry).
 * The target is measured with the image-build archive in legacy mode. Runs alternate between the
 * configurations so machine noise spreads over all of them.
 *
 * <p>Tables: the timings (p50 = nearest-rank median, and max); the archives (size, training time,
 * the training's exit status: the archive is written at a normal exit); the classes each
 * configuration loads from CDS archives versus parses at run time, in one extra run each.
 */
public final class ColdStartScenario implements Scenario {

  /** Title of the timing table. */
  public static final String TITLE = "Cold start (FPGA example jar, process start → ...)";

  /** Title of the archive table. */
  public static final String ARCHIVES = "AppCDS archives of the FPGA example jar";

  /** Title of the class-loading table. */
  public static final String CLASSES =
      "Classes loaded by the FPGA example (start → first Allocate)";

  /** The target's name. */
  public static final String TARGET = "process start → registered, recommended flags + AppCDS";

  /** The goal: 500 ms. */
  static final long GOAL_NANOS = 500_000_000L;

  /** Registration mode names in the tables. */
  static final String LEGACY = "legacy";

  /** Registration mode names in the tables. */
  static final String WATCHER = "plugin watcher";

  /**
   * One measured configuration.
   *
   * @param flags JVM flags
   * @param watcher plugin-watcher registration instead of legacy
   */
  record Config(JvmFlags.FlagSet flags, boolean watcher) {
    String mode() {
      return watcher ? WATCHER : LEGACY;
    }
  }

  /** Creates the scenario. */
  public ColdStartScenario() {}

  @Override
  public String name() {
    return "coldstart";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    Path jar = ctx.exampleJar("fpga");
    FpgaNode node = new FpgaNode(ctx.newDir("n"), jar);
    AppCds.Archives cds = AppCds.of(ctx, node);
    List<Config> configs =
        List.of(
            new Config(JvmFlags.DEFAULT, false),
            new Config(JvmFlags.RECOMMENDED, false),
            new Config(cds.withKubelet().flags(), false),
            new Config(cds.imageBuild().flags(), false),
            new Config(JvmFlags.RECOMMENDED, true),
            new Config(cds.imageBuild().flags(), true));
    int target = 3;
    int n = ctx.sizes().coldStarts();
    long[][] registered = new long[configs.size()][n];
    long[][] listed = new long[configs.size()][n];
    long[][] allocated = new long[configs.size()][n];
    long[][] cpu = new long[configs.size()][n];
    for (int i = 0; i < n; i++) {
      for (int c = 0; c < configs.size(); c++) {
        Config config = configs.get(c);
        try (FpgaRun run = new FpgaRun(node, config.flags(), ctx.newDir("c"), config.watcher())) {
          registered[c][i] = run.registered();
          cpu[c][i] = run.cpuAtRegistration();
          listed[c][i] = run.listed();
          allocated[c][i] = run.firstAllocate();
        }
      }
    }
    List<List<String>> rows =
        report.table(
            TITLE,
            "The FPGA example's runnable jar (1 resource, 2 devices on a fixture sysfs tree) started"
                + " as a process by the harness, registering with the harness's fake kubelet; times"
                + " from right before the process starts to the fake kubelet's events"
                + " (System.nanoTime in its event listener). First Allocate: a kubelet admit of one"
                + " device (Allocate, PreStartContainer) issued as soon as the devices are listed. "
                + n
                + " runs per row, alternating; p50 is the nearest-rank median. The harness JVM was"
                + " warmed by the AppCDS training runs. CPU time: user + system time of all the"
                + " plugin's threads when it was registered (/proc/<pid>/stat, 10 ms ticks): the"
                + " start-up work, less sensitive than wall time to a busy machine.",
            "flag set",
            "registration",
            "runs",
            "→ registered p50 (ms)",
            "→ registered max (ms)",
            "→ first list p50 (ms)",
            "→ first list max (ms)",
            "→ first Allocate p50 (ms)",
            "→ first Allocate max (ms)",
            "CPU time at registered p50 (ms)");
    for (int c = 0; c < configs.size(); c++) {
      Stats r = Stats.of(registered[c]);
      Stats l = Stats.of(listed[c]);
      Stats a = Stats.of(allocated[c]);
      rows.add(
          List.of(
              configs.get(c).flags().name(),
              configs.get(c).mode(),
              Integer.toString(n),
              Fmt.ms(r.percentile(50)),
              Fmt.ms(r.max()),
              Fmt.ms(l.percentile(50)),
              Fmt.ms(l.max()),
              Fmt.ms(a.percentile(50)),
              Fmt.ms(a.max()),
              Fmt.ms(Stats.of(cpu[c]).percentile(50))));
    }
    archiveTable(report, cds);
    classTable(ctx, report, node, configs);
    Stats shipped = Stats.of(registered[target]);
    report.target(
        TARGET,
        "≤ 500 ms",
        Fmt.ms(shipped.percentile(50))
            + " ms p50 (max "
            + Fmt.ms(shipped.max())
            + " ms; legacy registration; archive of the image build's CdsTraining run; "
            + n
            + " runs)",
        shipped.percentile(50) <= GOAL_NANOS);
  }

  private static void archiveTable(Report report, AppCds.Archives cds) {
    List<List<String>> rows =
        report.table(
            ARCHIVES,
            "Each archive is written by a training run of the same jar with the recommended flags"
                + " and -XX:ArchiveClassesAtExit; the JVM writes it as it exits (the plugin on"
                + " SIGTERM: the SDK's DevicePluginHost.run() then returns, exit status 0; the"
                + " image build's training at the end of its main). Image build: "
                + cds.imageBuild().command()
                + ".",
            "archive",
            "training",
            "exit status",
            "size (MiB)",
            "training wall time (s)");
    for (AppCds.Archive a : cds.all()) {
      rows.add(
          List.of(
              a.name(),
              a.training(),
              Integer.toString(a.exitStatus()),
              Fmt.mib(a.bytes()),
              String.format(Locale.ROOT, "%.1f", a.trainingNanos() / 1e9)));
    }
  }

  private static void classTable(
      BenchContext ctx, Report report, FpgaNode node, List<Config> configs) throws Exception {
    List<List<String>> rows =
        report.table(
            CLASSES,
            "One extra run per row with -Xlog:class+load (not timed): start, registered, first"
                + " Allocate, SIGTERM. \"From CDS\" counts classes mapped from the JDK's archive or"
                + " the application archive; the rest were parsed from the jar or the JDK's modules"
                + " at run time.",
            "flag set",
            "registration",
            "classes loaded",
            "from CDS archives",
            "parsed at run time");
    for (Config config : configs) {
      Path dir = ctx.newDir("l");
      Path log = dir.resolve("classes.log");
      List<String> flags = new ArrayList<>(config.flags().flags());
      flags.add("-Xlog:class+load=info:file=" + log);
      JvmFlags.FlagSet logged = new JvmFlags.FlagSet(config.flags().name(), flags);
      try (FpgaRun run = new FpgaRun(node, logged, dir, config.watcher())) {
        run.firstAllocate();
        run.stop();
      }
      long total;
      long shared;
      try (Stream<String> lines = Files.lines(log)) {
        List<String> loads = lines.filter(l -> l.contains(" source: ")).toList();
        total = loads.size();
        shared = loads.stream().filter(l -> l.contains("source: shared objects file")).count();
      }
      rows.add(
          List.of(
              config.flags().name(),
              config.mode(),
              Fmt.count(total),
              Fmt.count(shared),
              Fmt.count(total - shared)));
    }
  }
}
