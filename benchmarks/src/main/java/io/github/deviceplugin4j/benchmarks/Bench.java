package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.benchmarks.process.ColdStartScenario;
import io.github.deviceplugin4j.benchmarks.process.GoCold;
import io.github.deviceplugin4j.benchmarks.process.GoFlags;
import io.github.deviceplugin4j.benchmarks.process.MemoryScenario;
import io.github.deviceplugin4j.benchmarks.process.MultiResourceScenario;
import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.PluginCli;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The end-to-end benchmark command: runs every scenario over real Unix sockets and prints the
 * tables and targets as Markdown.
 *
 * <pre>
 * java -jar benchmarks/target/deviceplugin4j-benchmarks.jar [--quick] [--only=a,b] [--out=file.md]
 *     [--client=jvm|go] [--examples=dir]
 * </pre>
 *
 * <p>The command line is {@link BenchCommand}'s ({@code --help}).
 *
 * <p>{@code --client=go} drives the {@code allocate}, {@code observer} and {@code restart}
 * scenarios, and runs the {@code flags} scenario, with the Go programs of {@code benchmarks/go}
 * (grpc-go, like the kubelet), every plugin a separate process; without Go installed those
 * scenarios say how to install it and skip.
 */
public final class Bench {

  private Bench() {}

  /**
   * Every scenario, in the order they run.
   *
   * @return scenarios
   */
  public static List<Scenario> scenarios() {
    return List.of(
        new AllocateScenario(),
        new AdmitScenario(),
        new ObserverScenario(),
        new HealthScenario(),
        new RestartScenario(),
        new ScaleScenario(),
        new ColdStartScenario(),
        new MemoryScenario(),
        new MultiResourceScenario(),
        new GoFlags(),
        new GoCold());
  }

  /**
   * Runs the command; see {@code --help} ({@link BenchCommand}).
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    // System.exit also when done: stray non-daemon threads of a failed scenario must not keep the
    // JVM alive.
    System.exit(PluginCli.execute(new BenchCommand(), EnvironmentDefaults.none(), args));
  }

  /**
   * Runs scenarios and prints each table as soon as it is complete.
   *
   * @param sizes how much to measure
   * @param only scenario names to run, all when empty
   * @param examples the repository's examples directory
   * @param progress where tables and progress go
   * @return the report
   * @throws Exception when a scenario cannot measure
   */
  public static Report run(Sizes sizes, Set<String> only, Path examples, PrintStream progress)
      throws Exception {
    return run(sizes, only, examples, BenchContext.Client.JVM, progress);
  }

  /**
   * Runs scenarios with a choice of kubelet client and prints each table as soon as it is complete.
   *
   * @param sizes how much to measure
   * @param only scenario names to run, all when empty
   * @param examples the repository's examples directory
   * @param client the kubelet client of the scenarios that offer a choice
   * @param progress where tables and progress go
   * @return the report
   * @throws Exception when a scenario cannot measure
   */
  public static Report run(
      Sizes sizes,
      Set<String> only,
      Path examples,
      BenchContext.Client client,
      PrintStream progress)
      throws Exception {
    List<String> known = scenarios().stream().map(Scenario::name).toList();
    for (String name : only) {
      if (!known.contains(name)) {
        throw new IllegalArgumentException(
            "no scenario named " + name + "; the scenarios are " + String.join(", ", known));
      }
    }
    Path root = Files.createTempDirectory(Path.of("/tmp"), "dp4jb");
    BenchContext ctx = new BenchContext(sizes, root, examples, client);
    Report report = new Report();
    progress.println(header());
    try {
      for (Scenario s : scenarios()) {
        if (!only.isEmpty() && !only.contains(s.name())) {
          continue;
        }
        int before = report.tables().size();
        Instant start = Instant.now();
        progress.println("<!-- running " + s.name() + " -->");
        s.run(ctx, report);
        List<Report.Table> tables = report.tables();
        for (Report.Table t : tables.subList(before, tables.size())) {
          Report.print(t, progress);
        }
        progress.println(
            "<!-- "
                + s.name()
                + " took "
                + Duration.between(start, Instant.now()).toSeconds()
                + " s -->");
        progress.flush();
      }
      report.printTargets(progress);
    } finally {
      deleteTree(root);
    }
    return report;
  }

  /**
   * The whole report as Markdown, with the machine header.
   *
   * @param report the report
   * @return Markdown
   */
  public static String render(Report report) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    ps.println(header());
    report.tables().forEach(t -> Report.print(t, ps));
    report.printTargets(ps);
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /**
   * What the figures came from: date, CPU, cores, memory, OS, JVM and the harness's flags.
   *
   * @return Markdown lines
   */
  public static String header() {
    Runtime rt = Runtime.getRuntime();
    return "Measured "
        + Instant.now().truncatedTo(ChronoUnit.SECONDS)
        + " on "
        + cpuModel()
        + ", "
        + rt.availableProcessors()
        + " cores, "
        + Fmt.mib(totalMemory())
        + " MiB RAM, "
        + System.getProperty("os.name")
        + " "
        + System.getProperty("os.version")
        + "; "
        + System.getProperty("java.vm.name")
        + " "
        + System.getProperty("java.runtime.version")
        + "; harness JVM flags: "
        + (ManagementFactory.getRuntimeMXBean().getInputArguments().isEmpty()
            ? "(defaults)"
            : String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()))
        + "\n";
  }

  private static String cpuModel() {
    try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
      return lines
          .filter(l -> l.startsWith("model name"))
          .map(l -> l.substring(l.indexOf(':') + 1).trim())
          .findFirst()
          .orElse("unknown CPU");
    } catch (IOException | RuntimeException e) {
      return "unknown CPU";
    }
  }

  private static long totalMemory() {
    try (Stream<String> lines = Files.lines(Path.of("/proc/meminfo"))) {
      return lines
          .filter(l -> l.startsWith("MemTotal:"))
          .map(l -> Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024)
          .findFirst()
          .orElse(0L);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  static Path findExamples() {
    for (Path p : List.of(Path.of("examples"), Path.of("..", "examples"))) {
      if (Files.isDirectory(p.resolve("fpga"))) {
        return p.toAbsolutePath().normalize();
      }
    }
    return Path.of("examples").toAbsolutePath();
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    List<Path> paths = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(root)) {
      walk.forEach(paths::add);
    }
    paths.sort(Comparator.reverseOrder());
    for (Path p : paths) {
      Files.deleteIfExists(p);
    }
  }
}
