package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import io.github.deviceplugin4j.benchmarks.Sizes;
import io.github.deviceplugin4j.benchmarks.Stats;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The {@code flags} scenario (with {@code --client=go}): the FPGA example jar under several JVM
 * flag sets side by side with the Go stub plugin, everything driven by the Go programs:
 *
 * <ul>
 *   <li>Allocate latency at concurrency 1 and 16 (Go kubelet-client, all processes in one run,
 *       blocks alternating);
 *   <li>RSS idle and after {@link Sizes#memoryAllocates()} Allocates;
 *   <li>re-registration after a kubelet restart (Go fake-kubelet);
 *   <li>the cold Allocate: the first Allocate after registration, and one after {@link
 *       Sizes#coldIdleSeconds()} idle, in {@link Sizes#coldAllocates()} fresh processes each.
 * </ul>
 *
 * <p>Flag sets: the JDK 17 defaults; the JDK 17 images' flags (with their AppCDS archive); those
 * with C2 allowed and kept lean ({@link #C2_LEAN}); the same with Netty's pooled allocator; and,
 * when a JDK 25 is installed ({@value #JDK25_PROPERTY}, default Temurin 25's path), the JDK 25
 * image: the flags of the FPGA example's Dockerfile on JDK 25, with the AOT cache that the
 * Dockerfiles' training script ({@link AotTraining}) makes for them, and without it.
 */
public final class GoFlags implements Scenario {

  /** Title of the side-by-side table. */
  public static final String TITLE = "JVM flag sets through the kubelet's Go client";

  /** Title of the cold Allocate table. */
  public static final String COLD = "Cold Allocate through the kubelet's Go client";

  /** The cold table's companion: Allocates a node's way, a fraction of a second apart. */
  public static final String COLD_SERIES = "Allocates 100 ms apart through the kubelet's Go client";

  /** The first calls of a cold series, reported apart from the rest. */
  static final int COLD_SERIES_HEAD = 10;

  /** How many cold processes may run at once (most of them idle). */
  static final int COLD_PARALLEL = 12;

  /** Creates the scenario. */
  public GoFlags() {}

  @Override
  public String name() {
    return "flags";
  }

  /**
   * A row: a flag set of the FPGA example, or the Go stub (flags null); {@code aot}: the set gets
   * the start-up cache that the training script makes for its launcher and flags ({@link
   * AotTraining}) before it is measured.
   */
  record Config(String name, JvmFlags.FlagSet flags, boolean aot) {
    Config(String name, JvmFlags.FlagSet flags) {
      this(name, flags, false);
    }

    boolean go() {
      return flags == null;
    }

    /** This row with its cache trained, when it asks for one. */
    Config trained(BenchContext ctx, Path jar) throws Exception {
      return aot ? new Config(name, AotTraining.train(ctx, jar, flags, name), false) : this;
    }
  }

  /** The JDK 25 launcher of the optional AOT cache row; {@value #JDK25_PROPERTY} overrides it. */
  static Path jdk25() {
    return Path.of(
        System.getProperty(JDK25_PROPERTY, "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"));
  }

  /** System property naming a JDK 25 {@code java} launcher for the AOT cache row. */
  public static final String JDK25_PROPERTY = "bench.jdk25";

  /** Name of the JDK 25 image's row: its Dockerfile's flags and its AOT cache. */
  public static final String AOT_ROW = "JDK 25 image (AOT cache)";

  /**
   * The JDK 25 image's flags read from the FPGA example's Dockerfile, or null when no JDK 25 is
   * installed.
   */
  static JvmFlags.FlagSet image25(BenchContext ctx, JvmFlags.FlagSet image) throws Exception {
    return Files.isExecutable(jdk25())
        ? image25(AotTraining.imageFlags(ctx.examplesDir()), image)
        : null;
  }

  /**
   * The FPGA example as its image ships: on JDK 25 (when installed) the flags of its Dockerfile
   * with the AOT cache the Dockerfile's training script makes, else the JDK 17 images' flags with
   * their AppCDS archive. The Go-client {@code allocate} and {@code restart} scenarios measure it.
   *
   * @param ctx the run
   * @param jar the FPGA example's jar
   * @return the flag set, named for the report
   */
  static JvmFlags.FlagSet shipped(BenchContext ctx, Path jar) throws Exception {
    JvmFlags.FlagSet image = AppCds.image(ctx, jar).flags();
    JvmFlags.FlagSet image25 = image25(ctx, image);
    return image25 == null
        ? image.withFlags("JDK 17 image flags + AppCDS", image.flags())
        : AotTraining.train(ctx, jar, image25, AOT_ROW);
  }

  /** Trains the cache of every row that asks for one, in place. */
  static void trainAll(BenchContext ctx, Path jar, List<Config> configs) throws Exception {
    for (int i = 0; i < configs.size(); i++) {
      configs.set(i, configs.get(i).trained(ctx, jar));
    }
  }

  /** Name of the JDK 25 image's flags without the cache. */
  public static final String JDK25_NO_CACHE_ROW = "JDK 25 image flags, no cache";

  /**
   * The JDK 25 image's flags, untrained: the FPGA example Dockerfile's {@code JDK_JAVA_OPTIONS} on
   * the JDK 25 launcher, with the JDK 17 image's environment (its HTTP endpoint on).
   */
  static JvmFlags.FlagSet image25(List<String> dockerfileFlags, JvmFlags.FlagSet image) {
    return new JvmFlags.FlagSet("JDK 25 image", dockerfileFlags, jdk25().toString(), image.env());
  }

  /** The flag sets compared, given the image's AppCDS flags. */
  static List<Config> configs(JvmFlags.FlagSet image) {
    List<String> c2 = new ArrayList<>(image.flags());
    c2.removeAll(C1_ONLY);
    c2.addAll(C2_LEAN);
    List<String> c2Pooled = new ArrayList<>(c2);
    c2Pooled.remove("-Dio.netty.allocator.type=unpooled");
    c2Pooled.remove("-Dio.grpc.netty.useCustomAllocator=false");
    // Every plugin row runs the plugin as the image does (its environment: the HTTP endpoint on);
    // the rows differ in their JVM flags only.
    return List.of(
        new Config("go-stub", null),
        new Config("JDK 17 defaults", image.withFlags(JvmFlags.DEFAULT.name(), List.of())),
        new Config("image flags", image),
        new Config("image flags, C2 lean", image.withFlags("image, C2 lean", c2)),
        new Config(
            "image flags, C2 lean, pooled Netty",
            image.withFlags("image, C2 lean, pooled", c2Pooled)));
  }

  /** The image's flags that are about C1 alone, which "C2 lean" removes. */
  static final List<String> C1_ONLY = List.of("-XX:TieredStopAtLevel=1");

  /**
   * What "C2 lean" adds to the image's flags once C2 is allowed: C2's compiler arenas peak at 28-35
   * MiB while it compiles the request path, and glibc keeps what they freed, so the heap is trimmed
   * every 2 s; shallower inlining halves the arenas' peak.
   */
  static final List<String> C2_LEAN =
      List.of(
          "-XX:TrimNativeHeapInterval=2000", "-XX:InlineSmallCode=1000", "-XX:MaxInlineLevel=6");

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    if (ctx.client() != BenchContext.Client.GO) {
      report.skipped(name(), "runs with --client=go only (the Go kubelet client drives it)");
      return;
    }
    Optional<GoPrograms> found = GoPrograms.build(ctx);
    if (found.isEmpty()) {
      report.skipped(name(), GoPrograms.missingReason());
      return;
    }
    GoPrograms go = found.get();
    Sizes sizes = ctx.sizes();
    FpgaNode node = new FpgaNode(ctx.newDir("n"), ctx.exampleJar("fpga"));
    JvmFlags.FlagSet image = AppCds.image(ctx, node.jar()).flags();
    JvmFlags.FlagSet image25 = image25(ctx, image);
    String setsFile = System.getProperty(SETS_PROPERTY);
    List<Config> configs = new ArrayList<>(configs(image));
    if (setsFile != null) {
      configs.removeIf(c -> !CANDIDATE_BASELINES.contains(c.name()));
      configs.addAll(parseSets(Files.readAllLines(Path.of(setsFile)), image, image25));
    } else if (image25 != null) {
      configs.add(new Config(AOT_ROW, image25, true));
      configs.add(new Config(JDK25_NO_CACHE_ROW, image25));
    }
    trainAll(ctx, node.jar(), configs);
    Map<Config, List<String>> rows = new LinkedHashMap<>();
    Path dump =
        System.getProperty(DUMP_PROPERTY) == null
            ? null
            : Path.of(System.getProperty(DUMP_PROPERTY));
    loadAndMemory(ctx, go, node, configs, rows, dump);
    boolean loadOnly = Boolean.getBoolean(LOAD_ONLY_PROPERTY);
    for (Config c : loadOnly ? List.<Config>of() : configs) {
      GoRestart.Steps s =
          GoRestart.measure(
              ctx,
              go,
              c.go() ? GoAllocate.GO : GoAllocate.FPGA,
              ctx.newDir("gr"),
              node,
              c.flags(),
              sizes.restarts());
      rows.get(c)
          .addAll(
              List.of(
                  Fmt.ms(s.total().percentile(50)),
                  Fmt.ms(s.total().percentile(99)),
                  Fmt.ms(s.total().max())));
    }
    List<List<String>> table =
        report.table(
            TITLE,
            "The FPGA example jar (2 devices) under each flag set, and the Go stub plugin, each a"
                + " process. Allocate: the Go kubelet-client, all processes in one run, "
                + Fmt.count(sizes.allocateCalls())
                + " calls per process and concurrency in blocks alternating between them after "
                + Fmt.count(sizes.allocateWarmup())
                + " warm-up calls; µs. RSS: VmRSS, "
                + Idle.DESCRIPTION
                + "; then after "
                + Fmt.count(sizes.memoryAllocates())
                + " more Allocates at concurrency 4, right after them and settled (idle again, as"
                + " above). Restart: the Go fake-kubelet, "
                + sizes.restarts()
                + " restarts after "
                + GoRestart.WARM_UP
                + " warm-up ones, kubelet.sock served → first ListAndWatch list; ms. \"image"
                + " flags\" is what the example images ran on JDK 17 (until issue 37): "
                + String.join(" ", JvmFlags.RECOMMENDED.flags())
                + " and the image build's AppCDS archive (JDK 17); the JDK 25 rows (when a JDK 25"
                + " is installed) run the flags of examples/fpga/Dockerfile, "
                + (image25 == null ? "(none here)" : String.join(" ", image25.flags()))
                + ", with the AOT cache examples/aot/train.sh writes for them (-XX:AOTCache), as"
                + " the JDK 25 image does, and without it.",
            "plugin / flags",
            "c=1 p50",
            "c=1 p99",
            "c=16 p50",
            "c=16 p99",
            "c=16 ops/s",
            "RSS idle (MiB)",
            "RSS after load (MiB)",
            "RSS settled (MiB)",
            "threads",
            "restart p50",
            "restart p99",
            "restart max");
    rows.values().forEach(table::add);
    if (!loadOnly) {
      cold(ctx, report, go, node, configs);
    }
  }

  /**
   * System property naming a file of candidate flag sets: the table then has the Go stub, the
   * image's flags, C2 lean and these, instead of its usual rows (and no JDK 25 row). One set per
   * line, {@code name | tokens}; blank lines and lines starting with {@code #} are skipped. The
   * tokens change the JDK 17 image's flags (with its AppCDS archive), or, when the first token is
   * {@code @jdk25}, the JDK 25 image's (its Dockerfile's flags on the JDK 25 launcher, with the
   * cache the training script makes for the set's final flags; {@code @no-cache} leaves the cache
   * out): {@code !<flag>} removes that flag ({@code !<prefix>*} every flag starting with the
   * prefix, e.g. {@code !-XX:SharedArchiveFile=*}), {@code +C2_LEAN} adds {@link #C2_LEAN} (after
   * removing {@link #C1_ONLY}), {@code KEY=VALUE} is an environment entry (glibc's {@code
   * MALLOC_ARENA_MAX}, ...), anything else is appended as a JVM flag.
   */
  public static final String SETS_PROPERTY = "bench.flags.sets";

  /** The usual rows kept beside candidate sets: the references they are judged against. */
  static final List<String> CANDIDATE_BASELINES =
      List.of("go-stub", "image flags", "image flags, C2 lean");

  /** System property: {@code true} measures latency and RSS only (no restart, no cold tables). */
  public static final String LOAD_ONLY_PROPERTY = "bench.flags.loadOnly";

  /**
   * System property naming a directory where each JVM's {@code /proc/<pid>/smaps_rollup} and {@code
   * smaps} and, when it runs with {@code -XX:NativeMemoryTracking}, its NMT summary are written
   * idle, after the load and settled ({@code <row>.1idle.smaps}, ...): where the MiB are.
   */
  public static final String DUMP_PROPERTY = "bench.flags.dump";

  /**
   * Parses candidate flag sets (see {@link #SETS_PROPERTY}).
   *
   * @param lines the file's lines
   * @param image the image's flags, which each set changes
   * @return one row per set
   */
  static List<Config> parseSets(List<String> lines, JvmFlags.FlagSet image) {
    return parseSets(lines, image, null);
  }

  /**
   * Parses candidate flag sets (see {@link #SETS_PROPERTY}).
   *
   * @param lines the file's lines
   * @param image17 the JDK 17 image's flags, which each set changes
   * @param image25 the JDK 25 image's flags, which a set starting with {@code @jdk25} changes; null
   *     when no JDK 25 is installed (such a set is then an error naming {@value #JDK25_PROPERTY})
   * @return one row per set
   */
  static List<Config> parseSets(
      List<String> lines, JvmFlags.FlagSet image17, JvmFlags.FlagSet image25) {
    List<Config> sets = new ArrayList<>();
    for (String line : lines) {
      String l = line.strip();
      if (l.isEmpty() || l.startsWith("#")) {
        continue;
      }
      int bar = l.indexOf('|');
      if (bar < 0) {
        throw new IllegalArgumentException(
            "flag set line without '|' in " + SETS_PROPERTY + ": '" + l + "'; write name | tokens");
      }
      String name = l.substring(0, bar).strip();
      List<String> tokens = new ArrayList<>(List.of(l.substring(bar + 1).strip().split("\\s+")));
      boolean jdk25 = !tokens.isEmpty() && tokens.get(0).equals("@jdk25");
      if (jdk25) {
        tokens.remove(0);
        if (image25 == null) {
          throw new IllegalArgumentException(
              "flag set '"
                  + name
                  + "' runs on JDK 25, and there is none: install one or name its java with -D"
                  + JDK25_PROPERTY);
        }
      }
      boolean aot = jdk25 && !tokens.remove("@no-cache");
      JvmFlags.FlagSet image = jdk25 ? image25 : image17;
      List<String> flags = new ArrayList<>(image.flags());
      // The image's environment too (its HTTP endpoint): sets differ in their flags only.
      Map<String, String> env = new LinkedHashMap<>(image.env());
      for (String t : tokens) {
        if (t.isEmpty()) {
          continue;
        } else if (t.startsWith("@")) {
          throw new IllegalArgumentException(
              "flag set '" + name + "': " + t + " is not a token (@jdk25 first, or @no-cache)");
        } else if (t.equals("+C2_LEAN")) {
          flags.removeAll(C1_ONLY);
          flags.addAll(C2_LEAN);
        } else if (t.startsWith("!")) {
          String gone = t.substring(1);
          boolean removed =
              gone.endsWith("*")
                  ? flags.removeIf(f -> f.startsWith(gone.substring(0, gone.length() - 1)))
                  : flags.remove(gone);
          if (!removed) {
            throw new IllegalArgumentException(
                "flag set '" + name + "' removes " + gone + ", which the image's flags lack");
          }
        } else if (!t.startsWith("-") && t.contains("=")) {
          env.put(t.substring(0, t.indexOf('=')), t.substring(t.indexOf('=') + 1));
        } else {
          flags.add(t);
        }
      }
      sets.add(new Config(name, new JvmFlags.FlagSet(name, flags, image.java(), env), aot));
    }
    return sets;
  }

  /** Writes a process's smaps_rollup (and NMT summary when it tracks) to the dump directory. */
  private static void dump(Path dir, Config c, JavaProcess p, String when) {
    if (dir == null || c.go()) {
      return;
    }
    String base = c.name().replaceAll("[^A-Za-z0-9]+", "_") + "." + when;
    try {
      Files.createDirectories(dir);
      for (String file : List.of("smaps_rollup", "smaps")) {
        Files.writeString(
            dir.resolve(base + "." + file),
            Files.readString(Path.of("/proc", Long.toString(p.pid()), file)));
      }
      if (c.flags().flags().stream().anyMatch(f -> f.startsWith("-XX:NativeMemoryTracking"))) {
        Map<String, Long> nmt = NativeMemory.committed(p.pid(), dir.resolve(base + ".nmt"));
        Files.writeString(
            dir.resolve(base + ".nmt.sum"),
            nmt.entrySet().stream()
                .map(e -> e.getKey() + "\t" + Fmt.mib(e.getValue()))
                .collect(Collectors.joining("\n", "", "\n")));
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot dump the memory of " + c.name() + ": " + e, e);
    }
  }

  /** Latency at c=1 and c=16, then the memory load, all processes at once. */
  private static void loadAndMemory(
      BenchContext ctx,
      GoPrograms go,
      FpgaNode node,
      List<Config> configs,
      Map<Config, List<String>> rows,
      Path dump)
      throws Exception {
    Sizes sizes = ctx.sizes();
    Path dir = ctx.newDir("gf");
    List<FakeKubelet> kubelets = new ArrayList<>();
    List<JavaProcess> processes = new ArrayList<>();
    try {
      List<String> targets = new ArrayList<>();
      Map<Config, Idle> idle = new LinkedHashMap<>();
      for (int i = 0; i < configs.size(); i++) {
        Config c = configs.get(i);
        FakeKubelet k = FakeKubelet.builder().pluginDir(dir.resolve("p" + i)).start();
        kubelets.add(k);
        String resource = c.go() ? "bench.example.com/go" : FpgaNode.RESOURCE;
        JavaProcess p =
            c.go()
                ? JavaProcess.exec(
                    List.of(
                        go.stubPlugin().toString(),
                        "-dir=" + k.pluginDir(),
                        "-socket=go.sock",
                        "-resource=" + resource,
                        "-devices=2",
                        "-register"),
                    Map.of(),
                    dir.resolve("go.log"))
                : node.start(c.flags(), k.pluginDir(), null, ctx.newDir("f"));
        processes.add(p);
        Registration r;
        try {
          r = k.awaitRegistration(resource, GoAllocate.SETUP);
          k.awaitDevices(resource, l -> !l.isEmpty(), GoAllocate.SETUP);
        } catch (RuntimeException e) {
          throw new IllegalStateException(
              c.name() + " did not register: " + e.getMessage() + "\n" + p.logTail(30), e);
        }
        idle.put(c, Idle.await(p));
        dump(dump, c, p, "1idle");
        String ids =
            k.devices(resource).stream().map(DeviceState::id).collect(Collectors.joining(","));
        targets.add("-target=" + i + "=" + k.pluginDir().resolve(r.endpoint()) + "=" + ids);
      }
      Map<String, Map<Integer, GoLines.Line>> latency =
          GoAllocate.client(
              go,
              dir,
              "allocate",
              targets,
              List.of(1, 16),
              sizes.allocateWarmup(),
              sizes.allocateCalls());
      GoAllocate.client(
          go, dir, "load", "allocate", targets, List.of(4), 0, sizes.memoryAllocates(), List.of());
      List<ProcStatus> loadedAll = new ArrayList<>();
      for (JavaProcess p : processes) {
        loadedAll.add(p.status());
      }
      for (int i = 0; i < configs.size(); i++) {
        dump(dump, configs.get(i), processes.get(i), "2loaded");
      }
      List<ProcStatus> settledAll = new ArrayList<>();
      for (int i = 0; i < configs.size(); i++) {
        settledAll.add(Idle.await(processes.get(i)).status());
        dump(dump, configs.get(i), processes.get(i), "3settled");
      }
      for (int i = 0; i < configs.size(); i++) {
        Config c = configs.get(i);
        Map<Integer, GoLines.Line> l = latency.get(Integer.toString(i));
        ProcStatus loaded = loadedAll.get(i);
        rows.put(
            c,
            new ArrayList<>(
                List.of(
                    c.name(),
                    Fmt.us(l.get(1).nanos("p50")),
                    Fmt.us(l.get(1).nanos("p99")),
                    Fmt.us(l.get(16).nanos("p50")),
                    Fmt.us(l.get(16).nanos("p99")),
                    Fmt.count(Math.round(l.get(16).number("ops"))),
                    Fmt.mib(idle.get(c).status().rssBytes()),
                    Fmt.mib(loaded.rssBytes()),
                    Fmt.mib(settledAll.get(i).rssBytes()),
                    Integer.toString(loaded.threads()))));
      }
    } finally {
      processes.forEach(JavaProcess::close);
      kubelets.forEach(FakeKubelet::close);
    }
  }

  /** One cold run: a Go fake kubelet and a fresh plugin process. */
  /** A cold run; {@code idleDue} is when (System.nanoTime) its fake kubelet calls after idle. */
  private record ColdRun(
      Config config, JavaProcess kubelet, JavaProcess plugin, Path log, long idleDue) {}

  /**
   * No process starts within this long of another's call after idle: a starting JVM takes a core or
   * two for about a second, and that call would measure it, not the idle process.
   */
  static final Duration COLD_QUIET = Duration.ofSeconds(3);

  static void cold(
      BenchContext ctx, Report report, GoPrograms go, FpgaNode node, List<Config> configs)
      throws Exception {
    Sizes sizes = ctx.sizes();
    int n = sizes.coldAllocates();
    Map<Config, long[]> first = new LinkedHashMap<>();
    Map<Config, long[]> idle = new LinkedHashMap<>();
    Map<Config, long[][]> series = new LinkedHashMap<>();
    Map<Config, long[]> registered = new LinkedHashMap<>();
    Map<Config, long[]> listed = new LinkedHashMap<>();
    configs.forEach(
        c -> {
          registered.put(c, new long[n]);
          listed.put(c, new long[n]);
          first.put(c, new long[n]);
          idle.put(c, new long[n]);
          series.put(c, new long[n][]);
        });
    List<ColdRun> running = new ArrayList<>();
    Map<ColdRun, Integer> index = new LinkedHashMap<>();
    try {
      for (int i = 0; i < n; i++) {
        for (Config c : configs) {
          while (running.size() >= COLD_PARALLEL
              || (!running.isEmpty()
                  && running.get(0).idleDue() - System.nanoTime() < COLD_QUIET.toNanos())) {
            reap(running, index, idle, series);
          }
          Path dir = ctx.newDir("gc");
          Path pd = dir.resolve("p");
          Path log = dir.resolve("kubelet.log");
          JavaProcess kubelet =
              JavaProcess.exec(
                  List.of(
                      go.fakeKubelet().toString(),
                      "-dir=" + pd,
                      "-cold-idle=" + sizes.coldIdleSeconds() + "s",
                      "-series=" + sizes.coldSeries(),
                      "-series-gap=" + Sizes.COLD_SERIES_GAP_MS + "ms"),
                  Map.of(),
                  log);
          GoLines.awaitFile(pd.resolve("kubelet.sock"), kubelet, GoAllocate.SETUP);
          // Wall-clock time, as the Go fake kubelet prints its registration's instant.
          long started = wallNanos();
          JavaProcess plugin =
              c.go()
                  ? JavaProcess.exec(
                      List.of(
                          go.stubPlugin().toString(),
                          "-dir=" + pd,
                          "-socket=go.sock",
                          "-resource=bench.example.com/go",
                          "-devices=2",
                          "-register"),
                      Map.of(),
                      dir.resolve("go.log"))
                  : node.start(c.flags(), pd, null, dir);
          // The next start waits for this one's first Allocate: starts never overlap.
          try {
            first.get(c)[i] = awaitLine(c, kubelet, plugin, log, "cold").nanos("first");
            GoLines.Line reg = GoLines.parse(GoLines.read(log), "registered").get(0);
            registered.get(c)[i] = reg.nanos("register_unix") - started;
            listed.get(c)[i] = reg.nanos("list_unix") - started;
          } catch (Exception | Error e) {
            plugin.close();
            kubelet.close();
            throw e;
          }
          long idleDue = System.nanoTime() + Duration.ofSeconds(sizes.coldIdleSeconds()).toNanos();
          ColdRun run = new ColdRun(c, kubelet, plugin, log, idleDue);
          running.add(run);
          index.put(run, i);
        }
      }
      while (!running.isEmpty()) {
        reap(running, index, idle, series);
      }
    } finally {
      for (ColdRun r : running) {
        r.plugin().close();
        r.kubelet().close();
      }
    }
    List<List<String>> rows =
        report.table(
            COLD,
            "A fresh process per run, registering with a fresh Go fake-kubelet, which calls"
                + " Allocate (one device) on its connection right after the first ListAndWatch"
                + " list, and once more after "
                + sizes.coldIdleSeconds()
                + " s idle. "
                + n
                + " processes per row, started one after another (the next starts once the"
                + " previous answered its first Allocate; up to "
                + COLD_PARALLEL
                + " idle at once, and none starts within "
                + COLD_QUIET.toSeconds()
                + " s of another's call after idle); µs. Start → registered: from right before"
                + " the harness starts the process to the Register's arrival at the fake kubelet,"
                + " and to its first ListAndWatch list there (a node booting, a plugin upgrade),"
                + " both clocks the machine's wall clock; ms. Ratio: row / go-stub, p50.",
            "plugin / flags",
            "processes",
            "start → registered p50 (ms)",
            "max (ms)",
            "start → listed p50 (ms)",
            "first Allocate p50",
            "max",
            "after idle p50",
            "max",
            "first p50 / go-stub",
            "after idle p50 / go-stub");
    Stats goFirst = Stats.of(first.get(configs.get(0)));
    Stats goIdle = Stats.of(idle.get(configs.get(0)));
    for (Config c : configs) {
      Stats f = Stats.of(first.get(c));
      Stats d = Stats.of(idle.get(c));
      Stats r = Stats.of(registered.get(c));
      rows.add(
          List.of(
              c.name(),
              Integer.toString(n),
              Fmt.ms(r.percentile(50)),
              Fmt.ms(r.max()),
              Fmt.ms(Stats.of(listed.get(c)).percentile(50)),
              Fmt.us(f.percentile(50)),
              Fmt.us(f.max()),
              Fmt.us(d.percentile(50)),
              Fmt.us(d.max()),
              Fmt.ratio((double) f.percentile(50) / goFirst.percentile(50)),
              Fmt.ratio((double) d.percentile(50) / goIdle.percentile(50))));
      if (c.name().equals("image flags")) {
        double ratio = (double) f.percentile(50) / goFirst.percentile(50);
        report.target(
            "Go kubelet: first Allocate after registration, FPGA example (image flags), p50",
            "≤ 2× Go stub",
            Fmt.ratio(ratio),
            ratio <= 2.0);
      }
      if (c.name().equals(AOT_ROW)) {
        double ratio = (double) f.percentile(50) / goFirst.percentile(50);
        report.target(
            "Go kubelet: first Allocate of a fresh process, JDK 25 image (AOT cache), p50",
            "≤ 1.5× Go stub",
            Fmt.ratio(ratio),
            ratio <= 1.5);
        long ms = r.percentile(50) / 1_000_000;
        report.target(
            "Go kubelet: process start → registered, JDK 25 image (AOT cache), p50, idle machine",
            "≤ 400 ms",
            ms + " ms",
            ms <= 400);
      }
    }
    seriesTable(report, sizes, configs, series);
  }

  /** The wall clock in ns since the epoch (microsecond resolution on Linux). */
  static long wallNanos() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /**
   * The cold processes' series: after the call after idle, Allocates {@value
   * Sizes#COLD_SERIES_GAP_MS} ms apart, as a node's pod starts call a plugin. Between calls the
   * process sleeps, so each call finds cold caches, and with few calls the JIT compiles little.
   */
  private static void seriesTable(
      Report report, Sizes sizes, List<Config> configs, Map<Config, long[][]> series) {
    if (sizes.coldSeries() < 2) {
      return;
    }
    int head = Math.min(COLD_SERIES_HEAD, sizes.coldSeries() / 2);
    List<List<String>> rows =
        report.table(
            COLD_SERIES,
            "The same processes as the cold table: after the Allocate after idle, "
                + sizes.coldSeries()
                + " more, "
                + Sizes.COLD_SERIES_GAP_MS
                + " ms apart (calls 3 to "
                + (sizes.coldSeries() + 2)
                + " of each process). Calls 1 to "
                + head
                + " of the series and the rest, pooled over the processes; µs. Ratio: row /"
                + " go-stub, p50.",
            "plugin / flags",
            "calls",
            "1-" + head + " p50",
            "1-" + head + " p90",
            "rest p50",
            "rest p90",
            "1-" + head + " p50 / go-stub",
            "rest p50 / go-stub");
    Stats[] go = seriesStats(series.get(configs.get(0)), head);
    for (Config c : configs) {
      Stats[] s = seriesStats(series.get(c), head);
      rows.add(
          List.of(
              c.name(),
              Integer.toString(s[0].count() + s[1].count()),
              Fmt.us(s[0].percentile(50)),
              Fmt.us(s[0].percentile(90)),
              Fmt.us(s[1].percentile(50)),
              Fmt.us(s[1].percentile(90)),
              Fmt.ratio((double) s[0].percentile(50) / go[0].percentile(50)),
              Fmt.ratio((double) s[1].percentile(50) / go[1].percentile(50))));
    }
  }

  /** The series' first {@code head} calls and the rest, pooled over the processes. */
  private static Stats[] seriesStats(long[][] perProcess, int head) {
    int total = 0;
    for (long[] p : perProcess) {
      total += p.length;
    }
    long[] first = new long[total];
    long[] rest = new long[total];
    int nf = 0;
    int nr = 0;
    for (long[] p : perProcess) {
      for (int i = 0; i < p.length; i++) {
        if (i < head) {
          first[nf++] = p[i];
        } else {
          rest[nr++] = p[i];
        }
      }
    }
    return new Stats[] {Stats.of(first, nf), Stats.of(rest, nr)};
  }

  /**
   * Waits for a run to finish (one that already has, else the oldest, whose call after idle is the
   * next due); records its idle call.
   */
  private static void reap(
      List<ColdRun> running,
      Map<ColdRun, Integer> index,
      Map<Config, long[]> idle,
      Map<Config, long[][]> series)
      throws Exception {
    ColdRun r = running.get(0);
    for (Iterator<ColdRun> it = running.iterator(); it.hasNext(); ) {
      ColdRun x = it.next();
      if (!x.kubelet().isAlive()) {
        r = x;
        break;
      }
    }
    String out = GoLines.awaitSuccess(r.kubelet(), r.log(), Duration.ofSeconds(120));
    idle.get(r.config())[index.get(r)] = GoLines.parse(out, "idle").get(0).nanos("allocate");
    series.get(r.config())[index.get(r)] =
        GoLines.parse(out, "series").stream().mapToLong(l -> l.nanos("allocate")).toArray();
    r.plugin().close();
    running.remove(r);
  }

  /** Waits for the fake kubelet's first line of a kind. */
  private static GoLines.Line awaitLine(
      Config config, JavaProcess kubelet, JavaProcess plugin, Path log, String kind)
      throws Exception {
    long end = System.nanoTime() + GoAllocate.SETUP.toNanos();
    while (System.nanoTime() < end) {
      List<GoLines.Line> lines = GoLines.parse(GoLines.read(log), kind);
      if (!lines.isEmpty()) {
        return lines.get(0);
      }
      if (kubelet.waitFor(Duration.ofMillis(5))) {
        break;
      }
    }
    throw new IllegalStateException(
        "no '"
            + kind
            + "' line from the Go fake kubelet for "
            + config.name()
            + "\n"
            + kubelet.logTail(20)
            + "\n"
            + plugin.logTail(20));
  }
}
