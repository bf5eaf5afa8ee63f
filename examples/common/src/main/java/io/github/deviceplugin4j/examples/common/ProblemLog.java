package io.github.deviceplugin4j.examples.common;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;

/**
 * Logs each problem found in sysfs once when it appears and once when it is gone, so a poll every
 * few seconds does not flood the log.
 *
 * <pre>{@code
 * ProblemLog problems = new ProblemLog(log, "example.com/fpga");
 * problems.report(scan.problems()); // after every scan
 * }</pre>
 */
public final class ProblemLog {
  private final Logger log;
  private final String subject;
  private Set<String> current = Set.of();

  /**
   * A log of problems.
   *
   * @param log where to log
   * @param subject what each line is about, e.g. the resource name
   */
  public ProblemLog(Logger log, String subject) {
    this.log = log;
    this.subject = subject;
  }

  /**
   * Logs the problems that are new since the last report (WARN) and those that are gone (INFO).
   *
   * @param problems every problem found now, one sentence each
   */
  public synchronized void report(List<String> problems) {
    Set<String> next = new LinkedHashSet<>(problems);
    for (String p : next) {
      if (!current.contains(p)) {
        log.warn("{}: {}", subject, p);
      }
    }
    for (String p : current) {
      if (!next.contains(p)) {
        log.info("{}: resolved: {}", subject, p);
      }
    }
    current = next;
  }

  /**
   * The problems of the last report.
   *
   * @return one sentence per problem
   */
  public synchronized List<String> current() {
    return List.copyOf(current);
  }
}
