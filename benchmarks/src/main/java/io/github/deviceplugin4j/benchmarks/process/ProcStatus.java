package io.github.deviceplugin4j.benchmarks.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code /proc/<pid>/status} says about a process's memory and threads.
 *
 * @param rssBytes {@code VmRSS}: resident memory now
 * @param hwmBytes {@code VmHWM}: the highest resident memory so far
 * @param threads {@code Threads}
 * @param rssAnonBytes {@code RssAnon}: the resident private memory (heap, metaspace, code cache,
 *     thread stacks, malloc)
 * @param rssFileBytes {@code RssFile}: resident file mappings (libjvm.so, the CDS archives, jars)
 */
record ProcStatus(long rssBytes, long hwmBytes, int threads, long rssAnonBytes, long rssFileBytes) {

  /** USER_HZ: 100 on every Linux architecture the SDK targets. */
  static final long TICKS_PER_SECOND = 100;

  static ProcStatus read(long pid) {
    Path file = Path.of("/proc", Long.toString(pid), "status");
    List<String> lines = lines(pid, "status");
    return new ProcStatus(
        kib(lines, "VmRSS:", file),
        kib(lines, "VmHWM:", file),
        (int) number(lines, "Threads:", file),
        kib(lines, "RssAnon:", file),
        kib(lines, "RssFile:", file));
  }

  /**
   * User plus system CPU time the process used so far, from {@code /proc/<pid>/stat} (clock ticks
   * of 10 ms on Linux).
   *
   * @param pid the process
   * @return nanoseconds; -1 when the process is gone
   */
  static long cpuNanos(long pid) {
    String stat;
    try {
      stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    } catch (IOException e) {
      return -1;
    }
    // After the command name in parentheses: state is field 3, utime 14, stime 15 (1-based).
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
    return ticks * (1_000_000_000L / TICKS_PER_SECOND);
  }

  /**
   * The lines of one of a process's {@code /proc} files.
   *
   * @param pid the process
   * @param name the file, e.g. {@code status} or {@code smaps}
   * @return its lines
   * @throws UncheckedIOException when it cannot be read (the process exited)
   */
  static List<String> lines(long pid, String name) {
    Path file = Path.of("/proc", Long.toString(pid), name);
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + " (did the process exit?)", e);
    }
  }

  private static long kib(List<String> lines, String key, Path file) {
    return number(lines, key, file) * 1024;
  }

  private static long number(List<String> lines, String key, Path file) {
    for (String l : lines) {
      if (l.startsWith(key)) {
        return Long.parseLong(l.substring(key.length()).replace("kB", "").trim());
      }
    }
    throw new IllegalStateException(file + " has no " + key + " line: not Linux /proc?");
  }
}
