package io.github.deviceplugin4j.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The figures the suites print: one line per fault, starting with {@code RELIABILITY}, on standard
 * output and appended to the file named by the system property {@code reliability.figuresFile} (the
 * build sets {@code target/reliability-figures.txt}).
 *
 * <pre>{@code
 * Figures.print("restarts legacy n=1000 missed=0 " + Figures.latency(delaysMs));
 * }</pre>
 */
public final class Figures {

  /** The system property naming the file figures are appended to. */
  public static final String FILE_PROPERTY = "reliability.figuresFile";

  private Figures() {}

  /**
   * Prints one figure line, {@code RELIABILITY <text>}, and appends it to the figures file.
   *
   * @param text the figure, e.g. {@code restarts legacy n=100 missed=0 p50=1.2ms ...}
   * @return the printed line
   */
  public static synchronized String print(String text) {
    String line = "RELIABILITY " + text;
    System.out.println(line);
    String file = System.getProperty(FILE_PROPERTY);
    if (file != null && !file.isBlank()) {
      try {
        Path path = Path.of(file);
        Files.createDirectories(path.toAbsolutePath().getParent());
        Files.writeString(
            path,
            line + System.lineSeparator(),
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot append to " + file, e);
      }
    }
    return line;
  }

  /**
   * A percentile by the nearest-rank method.
   *
   * @param values the sample, not empty
   * @param p the percentile, 0 to 100
   * @return the value at that rank
   */
  public static double percentile(Collection<Double> values, double p) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no values");
    }
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
  }

  /**
   * p50, p99 and max of milliseconds, as the figures show them.
   *
   * @param millis the sample, not empty
   * @return e.g. {@code p50=12.1ms p99=30.2ms max=41.0ms}
   */
  public static String latency(Collection<Double> millis) {
    return String.format(
        Locale.ROOT,
        "p50=%.1fms p99=%.1fms max=%.1fms",
        percentile(millis, 50),
        percentile(millis, 99),
        Collections.max(millis));
  }
}
