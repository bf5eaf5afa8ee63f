package io.github.deviceplugin4j.benchmarks.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JVM's Native Memory Tracking summary of a process started with {@code
 * -XX:NativeMemoryTracking=summary}, read with {@code jcmd <pid> VM.native_memory summary}: the
 * committed KiB of each category ("Java Heap", "Class", "Thread", "Code", "GC", ...), and the
 * total.
 */
final class NativeMemory {

  private static final Pattern CATEGORY =
      Pattern.compile("^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private static final Pattern TOTAL =
      Pattern.compile("^Total: reserved=(\\d+)KB, committed=(\\d+)KB");

  private NativeMemory() {}

  /** The {@code jcmd} of the running JDK, or null when it is a JRE without one. */
  static Path jcmd() {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    return Files.isExecutable(jcmd) ? jcmd : null;
  }

  /**
   * Committed bytes per category, in the order jcmd prints them, with "Total" first.
   *
   * @param pid a JVM started with NMT
   * @param scratch a file for jcmd's output
   * @return category → committed bytes
   */
  static Map<String, Long> committed(long pid, Path scratch)
      throws IOException, InterruptedException {
    Path jcmd = jcmd();
    if (jcmd == null) {
      throw new IllegalStateException(
          "no jcmd in " + System.getProperty("java.home") + ": run the harness on a JDK");
    }
    Process p =
        new ProcessBuilder(jcmd.toString(), Long.toString(pid), "VM.native_memory", "summary")
            .redirectErrorStream(true)
            .redirectOutput(scratch.toFile())
            .start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("jcmd " + pid + " VM.native_memory did not answer in 30 s");
    }
    String out = Files.readString(scratch, StandardCharsets.UTF_8);
    Map<String, Long> result = new LinkedHashMap<>();
    for (String line : out.split("\n")) {
      String l = line.trim();
      Matcher total = TOTAL.matcher(l);
      if (total.find()) {
        result.put("Total", Long.parseLong(total.group(2)) * 1024);
        continue;
      }
      Matcher m = CATEGORY.matcher(l);
      if (m.find()) {
        result.put(m.group(1), Long.parseLong(m.group(3)) * 1024);
      }
    }
    if (result.isEmpty()) {
      throw new IllegalStateException(
          "jcmd " + pid + " VM.native_memory printed no summary:\n" + out);
    }
    return result;
  }
}
