package io.github.deviceplugin4j.benchmarks.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The machine-readable lines of the Go programs: {@code <kind> key=value key=value ...}, one record
 * per line.
 */
final class GoLines {

  private GoLines() {}

  /**
   * One line's fields.
   *
   * @param kind the first word
   * @param fields the key=value pairs, in order
   */
  record Line(String kind, Map<String, String> fields) {

    String get(String key) {
      String v = fields.get(key);
      if (v == null) {
        throw new IllegalStateException("the Go program's line '" + kind + "' has no " + key);
      }
      return v;
    }

    long nanos(String key) {
      return Long.parseLong(get(key));
    }

    double number(String key) {
      return Double.parseDouble(get(key));
    }
  }

  /** Parses every line of output, keeping those of the given kind. */
  static List<Line> parse(String output, String kind) {
    List<Line> lines = new ArrayList<>();
    for (String raw : output.split("\n")) {
      String[] words = raw.trim().split(" ");
      if (words.length == 0 || !words[0].equals(kind)) {
        continue;
      }
      Map<String, String> fields = new LinkedHashMap<>();
      for (int i = 1; i < words.length; i++) {
        int eq = words[i].indexOf('=');
        if (eq > 0) {
          fields.put(words[i].substring(0, eq), words[i].substring(eq + 1));
        }
      }
      lines.add(new Line(kind, fields));
    }
    return lines;
  }

  /**
   * Waits for a Go program to exit with status 0 and answers its output.
   *
   * @param p the process
   * @param log its output
   * @param timeout the longest wait
   * @return its output
   */
  static String awaitSuccess(JavaProcess p, Path log, Duration timeout) throws Exception {
    if (!p.waitFor(timeout)) {
      p.close();
      throw new IllegalStateException(
          "the Go program did not finish within " + timeout.toSeconds() + " s\n" + p.logTail(30));
    }
    String out = read(log);
    int status = p.stop();
    if (status != 0) {
      throw new IllegalStateException(
          "the Go program exited with status " + status + "\n" + p.logTail(30));
    }
    return out;
  }

  /** Waits until a file exists, at most {@code timeout}, failing with the process's output. */
  static void awaitFile(Path file, JavaProcess p, Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(file)) {
      if (System.nanoTime() > end) {
        throw new IllegalStateException(
            file + " did not appear within " + timeout.toSeconds() + " s\n" + p.logTail(30));
      }
      if (p.waitFor(Duration.ofMillis(5))) {
        throw new IllegalStateException(
            "the process exited before creating " + file + "\n" + p.logTail(30));
      }
    }
  }

  static String read(Path log) throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }
}
