package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Application class-data-sharing archives of the FPGA example's jar, trained two ways:
 *
 * <ul>
 *   <li>{@link #withKubelet}: a full run under the harness's fake kubelet: registered, devices
 *       listed, one Allocate, then SIGTERM. What a multi-stage image build with the testkit's fake
 *       kubelet could do.
 *   <li>{@link #imageBuild}: what the example Dockerfiles {@code RUN}: the jar's {@code
 *       CdsTraining} main (examples/common), with no kubelet and no hardware, which walks a
 *       simulated plugin through start, the kubelet's calls and both registration modes, and exits.
 * </ul>
 *
 * <p>Both check that the training exited with status 0 and that the archive exists: the JVM writes
 * it at a normal exit only (the end of main, System.exit, SIGTERM; never SIGKILL). The archives of
 * a run's work directory are made once and shared by the scenarios of that run.
 */
final class AppCds {

  /**
   * One archive.
   *
   * @param name flag-set name of the runs that use it
   * @param training how it was trained
   * @param file the archive
   * @param bytes its size
   * @param trainingNanos the training run's wall time
   * @param exitStatus the plugin's exit status after SIGTERM in the training run
   * @param command the training command, for {@link #imageBuild}; empty otherwise
   * @param image runs as the example image does, its HTTP endpoint on ({@link JvmFlags#image})
   */
  record Archive(
      String name,
      String training,
      Path file,
      long bytes,
      long trainingNanos,
      int exitStatus,
      String command,
      boolean image) {

    JvmFlags.FlagSet flags() {
      return image ? JvmFlags.image(name, file) : JvmFlags.withAppCds(name, file);
    }
  }

  /**
   * Both archives of a run.
   *
   * @param withKubelet trained under the fake kubelet
   * @param imageBuild trained by the image build's {@code CdsTraining} run (the shipped one)
   */
  record Archives(Archive withKubelet, Archive imageBuild) {

    List<Archive> all() {
      return List.of(withKubelet, imageBuild);
    }
  }

  /** The training main class inside every example jar. */
  static final String TRAINING_MAIN = "io.github.deviceplugin4j.examples.common.CdsTraining";

  private static final Map<Path, Archives> MADE = new ConcurrentHashMap<>();
  private static final Map<Path, Archive> IMAGES = new ConcurrentHashMap<>();

  private AppCds() {}

  /**
   * The run's archives, trained on first use.
   *
   * @param ctx the run
   * @param node the node the kubelet-trained archive runs on
   * @return the archives
   */
  static synchronized Archives of(BenchContext ctx, FpgaNode node) throws Exception {
    Archives a = MADE.get(ctx.root());
    if (a == null || !a.all().stream().allMatch(x -> Files.exists(x.file()))) {
      a = new Archives(withKubelet(node, ctx.newDir("k")), imageBuild(ctx, node.jar()));
      MADE.put(ctx.root(), a);
    }
    return a;
  }

  /**
   * The image build's archive alone, trained on first use (the Go-client scenarios run no other):
   * the run's from {@link #of} when that was made, else its own.
   *
   * @param ctx the run
   * @param jar the example's runnable jar
   * @return the archive
   */
  static synchronized Archive image(BenchContext ctx, Path jar) throws Exception {
    Archives both = MADE.get(ctx.root());
    if (both != null && Files.exists(both.imageBuild().file())) {
      return both.imageBuild();
    }
    Archive a = IMAGES.get(ctx.root());
    if (a == null || !Files.exists(a.file())) {
      a = imageBuild(ctx, jar);
      IMAGES.put(ctx.root(), a);
    }
    return a;
  }

  /**
   * Trains under the fake kubelet: registered, listed, one Allocate, SIGTERM.
   *
   * @param node the node and jar
   * @param dir an empty short directory
   * @return the archive
   */
  static Archive withKubelet(FpgaNode node, Path dir) throws Exception {
    Path jsa = dir.resolve("kubelet.jsa");
    long t0 = System.nanoTime();
    int exit;
    try (FpgaRun run = new FpgaRun(node, JvmFlags.training(jsa), dir)) {
      run.registered();
      run.firstAllocate();
      exit = run.stop();
      check(exit, jsa, run.process().logTail(20));
    }
    return new Archive(
        "recommended + AppCDS (trained with kubelet)",
        "registered, listed, 1 Allocate, SIGTERM",
        jsa,
        Files.size(jsa),
        System.nanoTime() - t0,
        exit,
        "",
        false);
  }

  /**
   * Builds the archive as the example Dockerfiles do: a static archive of exactly the classes the
   * jar's {@code CdsTraining} run loads (no kubelet), in two steps: {@code java <recommended flags>
   * -XX:DumpLoadedClassList=<list> -cp <jar> CdsTraining}, then {@code java <recommended flags>
   * -Xshare:dump -XX:SharedClassListFile=<list> -XX:SharedArchiveFile=<archive> -cp <jar>}. The
   * archive replaces the JDK's default one: the JDK classes the plugin never loads are not mapped,
   * and there is no second layer (a dynamic archive, {@code -XX:ArchiveClassesAtExit}, sits on top
   * of the JDK's whole default archive): 1-1.5 MiB less resident memory, measured.
   *
   * @param ctx the run (its directories)
   * @param jar the plugin jar
   * @return the archive
   */
  static Archive imageBuild(BenchContext ctx, Path jar) throws Exception {
    Path dir = ctx.newDir("i");
    Path jsa = dir.resolve("image.jsa");
    Path list = dir.resolve("classes.lst");
    Path log = dir.resolve("train.log");
    long t0 = System.nanoTime();
    List<String> training = recommendedJava(jar, "-XX:DumpLoadedClassList=" + list);
    training.add(TRAINING_MAIN);
    int exit = runStep(training, log, TRAINING_MAIN, 60);
    if (exit != 0 || !Files.exists(list)) {
      throw new IllegalStateException(
          TRAINING_MAIN + " exited with " + exit + " or wrote no class list\n" + tail(log));
    }
    // -Xshare:dump comes after the recommended -Xshare:auto: the last one counts.
    List<String> dump =
        recommendedJava(
            jar, "-Xshare:dump", "-XX:SharedClassListFile=" + list, "-XX:SharedArchiveFile=" + jsa);
    int dumped = runStep(dump, log, "-Xshare:dump", 60);
    long nanos = System.nanoTime() - t0;
    check(dumped, jsa, tail(log));
    return new Archive(
        "recommended + AppCDS (image build)",
        "CdsTraining: no kubelet (its own kubelet side); options, ListAndWatch, preferred,"
            + " Allocate, pre-start; a Register refused, one accepted (a readiness file written), a"
            + " kubelet restart; both"
            + " registration modes; exits; its class list dumped as a static archive",
        jsa,
        Files.size(jsa),
        nanos,
        exit,
        "java <recommended flags> -XX:DumpLoadedClassList=<list> -cp <jar> "
            + TRAINING_MAIN
            + "; java <recommended flags> -Xshare:dump -XX:SharedClassListFile=<list>"
            + " -XX:SharedArchiveFile=<archive> -cp <jar>",
        true);
  }

  /** {@code java <recommended flags> <flags> -cp <jar>}, for a main class or nothing to follow. */
  private static List<String> recommendedJava(Path jar, String... flags) {
    List<String> command = new ArrayList<>();
    command.add(JavaProcess.javaBinary());
    command.addAll(JvmFlags.RECOMMENDED.flags());
    command.addAll(List.of(flags));
    command.add("-cp");
    command.add(jar.toString());
    return command;
  }

  /** Runs one step of a training, its output appended to the log; its exit status. */
  private static int runStep(List<String> command, Path log, String what, int seconds)
      throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    Process p = pb.start();
    try {
      if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            what + " did not finish within " + seconds + " s\n" + tail(log));
      }
      return p.exitValue();
    } finally {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  private static void check(int exit, Path jsa, String log) throws IOException {
    if (exit != 0) {
      throw new IllegalStateException(
          "the training run exited with status " + exit + ", not 0\n" + log);
    }
    if (!Files.isRegularFile(jsa) || Files.size(jsa) == 0) {
      throw new IllegalStateException(
          "the training run exited with status 0 but wrote no archive at " + jsa + "\n" + log);
    }
  }

  private static String tail(Path log) {
    try {
      var lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
