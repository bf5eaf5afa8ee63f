package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The JDK 25 image as the harness measures it: its JVM flags read from the FPGA example's
 * Dockerfile ({@code ENV JDK_JAVA_OPTIONS}, the one place they are written), and its start-up cache
 * made by the same script the Dockerfiles run, {@code examples/aot/train.sh}, with the flags in
 * {@code JDK_JAVA_OPTIONS} as the image's build has them. On JDK 25 the script writes an AOT cache
 * (the plugin then runs with {@code -XX:AOTCache}), on an older JDK an AppCDS archive ({@code
 * -XX:SharedArchiveFile}); it checks itself that the JVM accepts what it wrote.
 */
final class AotTraining {

  /** The Dockerfile whose flags are the image's. */
  static final String DOCKERFILE = "fpga/Dockerfile";

  /** The training script, under the examples directory. */
  static final String SCRIPT = "aot/train.sh";

  private static final Pattern ENV = Pattern.compile("(?m)^ENV JDK_JAVA_OPTIONS=\"([^\"]*)\"");
  private static final Pattern TRAINED = Pattern.compile("(?m)^trained (aot|cds) (\\S+)$");

  private static final Map<List<String>, Trained> MADE = new ConcurrentHashMap<>();

  private AotTraining() {}

  /**
   * The flags of a Dockerfile's {@code ENV JDK_JAVA_OPTIONS="..."}, in order.
   *
   * @param dockerfile the Dockerfile's text
   * @return the flags
   * @throws IllegalArgumentException when it sets no {@code JDK_JAVA_OPTIONS}
   */
  static List<String> jdkJavaOptions(String dockerfile) {
    Matcher m = ENV.matcher(dockerfile);
    if (!m.find()) {
      throw new IllegalArgumentException("the Dockerfile sets no ENV JDK_JAVA_OPTIONS=\"...\"");
    }
    String flags = m.group(1).replace("\\\n", " ").strip();
    return flags.isEmpty() ? List.of() : List.of(flags.split("\\s+"));
  }

  /**
   * The image's flags, as the FPGA example's Dockerfile sets them.
   *
   * @param examplesDir the repository's {@code examples} directory
   * @return the flags
   */
  static List<String> imageFlags(Path examplesDir) throws IOException {
    return jdkJavaOptions(Files.readString(examplesDir.resolve(DOCKERFILE)));
  }

  /**
   * A flag set with its start-up cache: the training script run on {@code jar} with the set's
   * launcher and flags; one training per launcher and flags in a run.
   *
   * @param ctx the run (its directories, the examples directory)
   * @param jar the plugin jar, at the path the measured runs use
   * @param set the flags and launcher to train with (null launcher: the harness's own)
   * @param name how the report names the result
   * @return the set plus {@code -XX:AOTCache=<cache>} (or {@code -XX:SharedArchiveFile=<archive>})
   */
  static JvmFlags.FlagSet train(BenchContext ctx, Path jar, JvmFlags.FlagSet set, String name)
      throws Exception {
    String java = set.java() == null ? JavaProcess.javaBinary() : set.java();
    List<String> key = new ArrayList<>(set.flags());
    key.add(0, java);
    key.add(jar.toString());
    Trained made = MADE.get(key);
    if (made == null || !Files.exists(made.file())) {
      made = run(ctx, jar, java, set);
      MADE.put(key, made);
    }
    return made.flags().withFlags(name, made.flags().flags());
  }

  /** A flag set with its cache, and the cache's file. */
  private record Trained(JvmFlags.FlagSet flags, Path file) {}

  private static Trained run(BenchContext ctx, Path jar, String java, JvmFlags.FlagSet set)
      throws Exception {
    Path dir = ctx.newDir("a");
    Path cache = dir.resolve("plugin.aot");
    Path log = dir.resolve("train.log");
    Path script = ctx.examplesDir().resolve(SCRIPT).toAbsolutePath().normalize();
    ProcessBuilder pb =
        new ProcessBuilder("sh", script.toString(), java, jar.toString(), cache.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    pb.environment().put("JDK_JAVA_OPTIONS", String.join(" ", set.flags()));
    pb.environment().putAll(set.env());
    Process p = pb.start();
    try {
      if (!p.waitFor(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException(script + " did not finish within 10 min\n" + tail(log));
      }
    } finally {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    String out = Files.readString(log);
    Matcher m = TRAINED.matcher(out);
    if (p.exitValue() != 0 || !m.find()) {
      // The cache's assembly prints after the training's own failure: name that first.
      String failures =
          out.lines()
              .filter(l -> l.contains("failed") || l.contains("timed out"))
              .limit(10)
              .collect(Collectors.joining("\n"));
      throw new IllegalStateException(
          script
              + " exited with "
              + p.exitValue()
              + " (flags: "
              + set.flags()
              + ", log: "
              + log
              + ")\n"
              + failures
              + "\n...\n"
              + tail(log));
    }
    List<String> flags = new ArrayList<>(set.flags());
    flags.add((m.group(1).equals("aot") ? "-XX:AOTCache=" : "-XX:SharedArchiveFile=") + cache);
    return new Trained(new JvmFlags.FlagSet(set.name(), flags, set.java(), set.env()), cache);
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
  }
}
