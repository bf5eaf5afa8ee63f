package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Memory of the FPGA example's process, read from {@code /proc/<pid>/status}: idle after it
 * registered and listed its devices, and after {@link
 * io.github.deviceplugin4j.benchmarks.Sizes#memoryAllocates()} Allocate calls (one device ID each)
 * made at concurrency {@value #CONCURRENCY} straight on the fake kubelet's connection to the plugin
 * ({@code FakeKubelet.pluginChannel}), for the JVM defaults, the recommended flags, and the
 * recommended flags with the AppCDS archive of the image build, run as the example image runs it
 * (its HTTP endpoint on). The targets are judged on that last one: it is what ships.
 */
public final class MemoryScenario implements Scenario {

  /** Title of the table. */
  public static final String TITLE = "Memory of the FPGA example process (VmRSS / VmHWM)";

  /** Concurrent callers during the load. */
  static final int CONCURRENCY = 4;

  /** Goal for idle RSS with the recommended flags. */
  static final long IDLE_GOAL = 64L << 20;

  /** Goal for RSS after the load with the recommended flags. */
  static final long LOADED_GOAL = 72L << 20;

  /** Creates the scenario. */
  public MemoryScenario() {}

  @Override
  public String name() {
    return "memory";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    FpgaNode node = new FpgaNode(ctx.newDir("n"), ctx.exampleJar("fpga"));
    AppCds.Archives cds = AppCds.of(ctx, node);
    int calls = ctx.sizes().memoryAllocates();
    List<JvmFlags.FlagSet> sets =
        List.of(JvmFlags.DEFAULT, JvmFlags.RECOMMENDED, cds.imageBuild().flags());
    List<List<String>> rows =
        report.table(
            TITLE,
            "The FPGA example's runnable jar (1 resource, 2 devices) as a process, registered with"
                + " the harness's fake kubelet; "
                + Idle.DESCRIPTION
                + ". Then "
                + Fmt.count(calls)
                + " Allocate calls with one device ID each, "
                + CONCURRENCY
                + " concurrent blocking callers on the kubelet's connection to the plugin; the"
                + " loaded values are read right after the last call. VmHWM is the peak so far."
                + " The image build's row is the example image as it runs: a static archive of"
                + " the classes its CdsTraining run loads, and its HTTP endpoint (/metrics,"
                + " /healthz, /readyz) on; the targets are judged on it.",
            "flag set",
            "RSS idle (MiB)",
            "HWM idle (MiB)",
            "RSS after " + Fmt.count(calls) + " Allocates (MiB)",
            "HWM after (MiB)",
            "Allocate calls/s",
            "threads",
            "idle reached after (s)");
    Measured image = null;
    for (JvmFlags.FlagSet set : sets) {
      Measured m = measure(ctx, node, set, calls);
      image = m; // the last set: the image's
      rows.add(
          List.of(
              set.name(),
              Fmt.mib(m.idle().status().rssBytes()),
              Fmt.mib(m.idle().status().hwmBytes()),
              Fmt.mib(m.loaded().rssBytes()),
              Fmt.mib(m.loaded().hwmBytes()),
              Fmt.count(Math.round(m.callsPerSecond())),
              Integer.toString(m.loaded().threads()),
              String.format(Locale.ROOT, "%.1f", m.idle().waitedNanos() / 1e9)
                  + (m.idle().settled() ? "" : " (RSS still moving)")));
    }
    long idle = image.idle().status().rssBytes();
    long loaded = image.loaded().rssBytes();
    report.target(
        "idle RSS, the image (recommended flags, its archive, HTTP endpoint on)",
        "≤ 64 MiB",
        Fmt.mib(idle) + " MiB",
        idle <= IDLE_GOAL);
    report.target(
        "RSS after " + Fmt.count(calls) + " Allocates, the image",
        "≤ 72 MiB",
        Fmt.mib(loaded) + " MiB (HWM " + Fmt.mib(image.loaded().hwmBytes()) + " MiB)",
        loaded <= LOADED_GOAL);
    if (idle > IDLE_GOAL || loaded > LOADED_GOAL || Boolean.getBoolean(NMT_PROPERTY)) {
      breakdown(ctx, report, node, cds.imageBuild().flags(), calls);
    }
  }

  /** Set to {@code true} to print the breakdown even when the targets are met. */
  public static final String NMT_PROPERTY = "bench.nmt";

  /** Title of the breakdown table. */
  public static final String BREAKDOWN = "Where the FPGA example's memory goes (the image)";

  /**
   * One more run of the image's set with Native Memory Tracking: RSS split into file-backed and
   * anonymous memory, the file-backed part per file, and the JVM's committed memory per NMT
   * category, idle and after the load.
   */
  private static void breakdown(
      BenchContext ctx, Report report, FpgaNode node, JvmFlags.FlagSet image, int calls)
      throws Exception {
    if (NativeMemory.jcmd() == null) {
      return;
    }
    List<String> flags = new ArrayList<>(image.flags());
    flags.add("-XX:NativeMemoryTracking=summary");
    JvmFlags.FlagSet nmt = image.withFlags(image.name() + " + NMT", flags);
    Path dir = ctx.newDir("m");
    ProcStatus idle;
    ProcStatus loaded;
    Map<String, Long> nmtIdle;
    Map<String, Long> nmtLoaded;
    Map<String, Long> filesIdle;
    Map<String, Long> filesLoaded;
    try (FpgaRun run = new FpgaRun(node, nmt, dir)) {
      run.registered();
      run.listed();
      idle = Idle.await(run.process()).status();
      nmtIdle = NativeMemory.committed(run.process().pid(), dir.resolve("nmt-idle.txt"));
      filesIdle = Smaps.residentFiles(run.process().pid());
      load(channel(run), requests(run), calls);
      loaded = run.process().status();
      nmtLoaded = NativeMemory.committed(run.process().pid(), dir.resolve("nmt-loaded.txt"));
      filesLoaded = Smaps.residentFiles(run.process().pid());
      run.stop();
    }
    List<List<String>> rows =
        report.table(
            BREAKDOWN,
            "A separate run of the image's set (its archive, HTTP endpoint on) with"
                + " -XX:NativeMemoryTracking=summary added (NMT's own bookkeeping is the \"Native"
                + " Memory Tracking\" row). RssFile: resident file pages; \"mapped\": what each"
                + " mapped file of 64 KiB or more holds resident (smaps Rss, its private copies of"
                + " pages included, so the files add up to more than RssFile: the JDK relocates"
                + " the CDS archive, which copies its pages); RssAnon: private memory. NMT rows are"
                + " committed memory (jcmd"
                + " VM.native_memory summary): committed is not all resident (thread stacks,"
                + " heap), and malloc'd memory outside the JVM's own accounting is not in it.",
            "what",
            "idle (MiB)",
            "after " + Fmt.count(calls) + " Allocates (MiB)",
            "growth (MiB)");
    rows.add(row("VmRSS", idle.rssBytes(), loaded.rssBytes()));
    rows.add(row("RssFile", idle.rssFileBytes(), loaded.rssFileBytes()));
    for (Map.Entry<String, Long> e : filesIdle.entrySet()) {
      long after = filesLoaded.getOrDefault(e.getKey(), 0L);
      if (e.getValue() >= 64 * 1024 || after >= 64 * 1024) {
        rows.add(row("mapped " + Path.of(e.getKey()).getFileName(), e.getValue(), after));
      }
    }
    rows.add(row("RssAnon", idle.rssAnonBytes(), loaded.rssAnonBytes()));
    for (Map.Entry<String, Long> e : nmtLoaded.entrySet()) {
      long before = nmtIdle.getOrDefault(e.getKey(), 0L);
      if (before >= 64 * 1024 || e.getValue() >= 64 * 1024) {
        rows.add(row("NMT " + e.getKey() + " committed", before, e.getValue()));
      }
    }
  }

  private static List<String> row(String what, long before, long after) {
    return List.of(
        what,
        Fmt.mib(before),
        Fmt.mib(after),
        (after >= before ? "+" : "") + Fmt.mib(after - before));
  }

  /**
   * One flag set's figures.
   *
   * @param idle after registration
   * @param loaded after the load
   * @param callsPerSecond during the load
   */
  record Measured(Idle idle, ProcStatus loaded, double callsPerSecond) {}

  static Measured measure(BenchContext ctx, FpgaNode node, JvmFlags.FlagSet set, int calls)
      throws Exception {
    try (FpgaRun run = new FpgaRun(node, set, ctx.newDir("m"))) {
      run.registered();
      run.listed();
      Idle idle = Idle.await(run.process());
      long nanos = load(channel(run), requests(run), calls);
      ProcStatus loaded = run.process().status();
      run.stop();
      return new Measured(idle, loaded, calls / (nanos / 1e9));
    }
  }

  private static ManagedChannel channel(FpgaRun run) {
    return run.kubelet()
        .pluginChannel(FpgaNode.RESOURCE)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "the fake kubelet has no connection to " + FpgaNode.RESOURCE));
  }

  /** One Allocate request per listed device, each with that one device ID. */
  private static List<AllocateRequest> requests(FpgaRun run) {
    List<AllocateRequest> requests = new ArrayList<>();
    for (DeviceState d : run.kubelet().devices(FpgaNode.RESOURCE)) {
      requests.add(
          AllocateRequest.newBuilder()
              .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(d.id()))
              .build());
    }
    if (requests.isEmpty()) {
      throw new IllegalStateException("the plugin listed no device for " + FpgaNode.RESOURCE);
    }
    return requests;
  }

  /** {@code calls} Allocates spread over {@link #CONCURRENCY} threads; returns the wall time. */
  static long load(ManagedChannel channel, List<AllocateRequest> requests, int calls)
      throws Exception {
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(CONCURRENCY);
    try {
      long t0 = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < CONCURRENCY; t++) {
        done.add(
            pool.submit(
                () -> {
                  DevicePluginGrpc.DevicePluginBlockingStub stub =
                      DevicePluginGrpc.newBlockingStub(channel);
                  for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
                    AllocateResponse r =
                        stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                            .allocate(requests.get(i % requests.size()));
                    if (r.getContainerResponsesCount() != 1) {
                      throw new IllegalStateException(
                          String.format(
                              Locale.ROOT,
                              "Allocate answered %d container responses for 1 request",
                              r.getContainerResponsesCount()));
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(10, TimeUnit.MINUTES);
      }
      return System.nanoTime() - t0;
    } finally {
      pool.shutdownNow();
    }
  }
}
