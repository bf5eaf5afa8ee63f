package io.github.deviceplugin4j.benchmarks.process;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Resident memory per mapped file, summed from {@code /proc/<pid>/smaps} (the CDS archive,
 * libjvm.so, the jar). A mapping's {@code Rss} includes the private copies of its pages that the
 * process wrote (the JDK relocates the CDS archive), so the files can add up to more than {@code
 * RssFile}. Mappings without a file are left out.
 */
final class Smaps {

  private Smaps() {}

  /**
   * Resident bytes of each mapped file, largest first.
   *
   * @param pid the process
   * @return file path to resident bytes
   */
  static Map<String, Long> residentFiles(long pid) {
    return parse(ProcStatus.lines(pid, "smaps"));
  }

  /**
   * Resident bytes of each mapped file in the text of an {@code smaps} file, largest first.
   *
   * @param lines the file's lines
   * @return file path to resident bytes; mappings without a file (heap, stacks, anonymous) are left
   *     out
   */
  static Map<String, Long> parse(List<String> lines) {
    Map<String, Long> byFile = new LinkedHashMap<>();
    String current = null;
    for (String l : lines) {
      if (isMappingHeader(l)) {
        String[] f = l.trim().split("\\s+", 6);
        current = f.length == 6 && f[5].startsWith("/") ? f[5] : null;
      } else if (current != null && l.startsWith("Rss:")) {
        long kib = Long.parseLong(l.substring(4).replace("kB", "").trim());
        byFile.merge(current, kib * 1024, Long::sum);
      }
    }
    Map<String, Long> sorted = new LinkedHashMap<>();
    byFile.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .forEach(e -> sorted.put(e.getKey(), e.getValue()));
    return sorted;
  }

  /** A mapping's first line starts with its address range, e.g. {@code 7f00-7f10 r--p ...}. */
  private static boolean isMappingHeader(String line) {
    int dash = line.indexOf('-');
    int space = line.indexOf(' ');
    return dash > 0 && space > dash && line.substring(0, dash).chars().allMatch(Smaps::isHex);
  }

  private static boolean isHex(int c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  }
}
