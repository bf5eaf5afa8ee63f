package io.github.deviceplugin4j.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a process holds, read from Linux's {@code /proc} and the JVM's management beans: open file
 * descriptors, live threads, heap after a full GC, and listening TCP sockets.
 *
 * <pre>{@code
 * ProcessProbe.Usage before = ProcessProbe.Usage.now();
 * ... // 1,000 kubelet restarts
 * ProcessProbe.Usage after = ProcessProbe.Usage.now();
 * System.out.println(before.to(after)); // fds 57->57 threads 31->31 heapAfterGC 9.1->9.3MiB
 * }</pre>
 */
public final class ProcessProbe {

  private static final Pattern SOCKET_LINK = Pattern.compile("socket:\\[(\\d+)]");
  private static final String TCP_LISTEN = "0A";

  private ProcessProbe() {}

  /**
   * The number of open file descriptors of this process ({@code /proc/self/fd}).
   *
   * @return the count
   */
  public static int openFileDescriptors() {
    return openFileDescriptors(Path.of("/proc/self"));
  }

  /**
   * The number of open file descriptors of another process.
   *
   * @param pid the process ID
   * @return the count
   */
  public static int openFileDescriptors(long pid) {
    return openFileDescriptors(Path.of("/proc", Long.toString(pid)));
  }

  private static int openFileDescriptors(Path proc) {
    int n = 0;
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
      for (Path ignored : fds) {
        n++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + proc.resolve("fd") + " (Linux only)", e);
    }
    return n - 1; // the descriptor of the directory stream itself
  }

  /**
   * The number of live threads of this JVM.
   *
   * @return the count
   */
  public static int liveThreads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  /**
   * Heap in use after full collections, in MiB: {@code System.gc()} three times, then the memory
   * bean's heap usage.
   *
   * @return MiB in use
   */
  public static double heapAfterGcMiB() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
  }

  /**
   * The listening TCP sockets (IPv4 and IPv6) this process owns: {@code LISTEN} entries (state
   * {@code 0A}) of {@code /proc/self/net/tcp} and {@code tcp6} whose inode is one of this process's
   * socket descriptors. The tables list the whole network namespace; matching inodes keeps other
   * processes' listeners out.
   *
   * @return one line per listener, e.g. {@code tcp 0100007F:A1B2 inode 12345}; empty when none
   */
  public static List<String> tcpListeners() {
    return tcpListeners(Path.of("/proc/self"));
  }

  /**
   * The listening TCP sockets of another process; see {@link #tcpListeners()}.
   *
   * @param pid the process ID
   * @return one line per listener; empty when none
   */
  public static List<String> tcpListeners(long pid) {
    return tcpListeners(Path.of("/proc", Long.toString(pid)));
  }

  private static List<String> tcpListeners(Path proc) {
    Set<String> own = socketInodes(proc);
    List<String> out = new ArrayList<>();
    for (String table : List.of("tcp", "tcp6")) {
      List<String> lines;
      try {
        lines = Files.readAllLines(proc.resolve("net").resolve(table));
      } catch (NoSuchFileException e) {
        continue; // no IPv6 in this kernel
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + proc.resolve("net").resolve(table), e);
      }
      for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
        String[] f = line.trim().split("\\s+");
        // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
        if (f.length > 9
            && f[3].toUpperCase(Locale.ROOT).equals(TCP_LISTEN)
            && own.contains(f[9])) {
          out.add(table + " " + f[1] + " inode " + f[9]);
        }
      }
    }
    return out;
  }

  /**
   * The inodes of the sockets a process has open, from its {@code fd} links ({@code
   * socket:[inode]}).
   *
   * @param proc {@code /proc/self} or {@code /proc/<pid>}
   * @return inode numbers as text
   */
  static Set<String> socketInodes(Path proc) {
    Set<String> inodes = new HashSet<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
      for (Path fd : fds) {
        try {
          Matcher m = SOCKET_LINK.matcher(Files.readSymbolicLink(fd).toString());
          if (m.matches()) {
            inodes.add(m.group(1));
          }
        } catch (IOException closedMeanwhile) {
          // the descriptor was closed between listing and reading
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + proc.resolve("fd"), e);
    }
    return inodes;
  }

  /**
   * File descriptors, threads and heap after GC at one moment.
   *
   * @param fds open file descriptors
   * @param threads live threads
   * @param heapMiB heap in use after full collections, MiB
   */
  public record Usage(int fds, int threads, double heapMiB) {

    /**
     * Measures this process now (runs full collections).
     *
     * @return the usage
     */
    public static Usage now() {
      double heap = heapAfterGcMiB();
      return new Usage(openFileDescriptors(), liveThreads(), heap);
    }

    /**
     * Before and after, the way the suites print them.
     *
     * @param after a later measurement
     * @return e.g. {@code fds 57->57 threads 31->31 heapAfterGC 9.1->9.3MiB}
     */
    public String to(Usage after) {
      return String.format(
          Locale.ROOT,
          "fds %d->%d threads %d->%d heapAfterGC %.1f->%.1fMiB",
          fds,
          after.fds,
          threads,
          after.threads,
          heapMiB,
          after.heapMiB);
    }
  }
}
