package io.github.deviceplugin4j.benchmarks;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * What a benchmark run measured: tables (printed as Markdown, so they paste into
 * docs/performance.md) and the targets with the measured value and whether it meets them.
 */
public final class Report {

  /**
   * One table.
   *
   * @param title heading
   * @param note one line under the heading: what was measured and how
   * @param columns column names
   * @param rows cells, one list per row
   */
  public record Table(String title, String note, List<String> columns, List<List<String>> rows) {

    /**
     * The cell of a row under a column.
     *
     * @param row row index
     * @param column column name
     * @return the cell
     */
    public String cell(int row, String column) {
      int c = columns.indexOf(column);
      if (c < 0) {
        throw new IllegalArgumentException("no column " + column + " in " + title);
      }
      return rows.get(row).get(c);
    }
  }

  /**
   * One target.
   *
   * @param name what is measured
   * @param target the goal as text
   * @param measured the measured value as text
   * @param met whether the measured value meets the goal
   */
  public record Target(String name, String target, String measured, boolean met) {}

  private final List<Table> tables = new ArrayList<>();
  private final List<Target> targets = new ArrayList<>();

  /**
   * Starts a table.
   *
   * @param title heading
   * @param note what was measured and how
   * @param columns column names
   * @return the table's row list, to add rows to
   */
  public synchronized List<List<String>> table(String title, String note, String... columns) {
    List<List<String>> rows = Collections.synchronizedList(new ArrayList<>());
    tables.add(new Table(title, note, List.of(columns), rows));
    return rows;
  }

  /**
   * Records a target.
   *
   * @param name what is measured
   * @param target the goal
   * @param measured the value
   * @param met whether it is met
   */
  public synchronized void target(String name, String target, String measured, boolean met) {
    targets.add(new Target(name, target, measured, met));
  }

  /**
   * Records that a scenario measured nothing, and why, as a one-row table titled {@code Skipped:
   * <scenario>}, so that the printed report says it where the tables would be.
   *
   * @param scenario the scenario's name
   * @param reason what is missing and how to get it
   */
  public synchronized void skipped(String scenario, String reason) {
    List<List<String>> rows = table("Skipped: " + scenario, "", "scenario", "reason");
    rows.add(List.of(scenario, reason));
  }

  /**
   * The tables so far.
   *
   * @return tables
   */
  public synchronized List<Table> tables() {
    return List.copyOf(tables);
  }

  /**
   * A table by title.
   *
   * @param title heading
   * @return the table
   */
  public synchronized Optional<Table> table(String title) {
    return tables.stream().filter(t -> t.title().equals(title)).findFirst();
  }

  /**
   * The targets so far.
   *
   * @return targets
   */
  public synchronized List<Target> targets() {
    return List.copyOf(targets);
  }

  /**
   * Prints one table as Markdown.
   *
   * @param t the table
   * @param out where
   */
  public static void print(Table t, PrintStream out) {
    out.println("### " + t.title());
    out.println();
    if (!t.note().isEmpty()) {
      out.println(t.note());
      out.println();
    }
    out.println("| " + String.join(" | ", t.columns()) + " |");
    out.println("|" + "---|".repeat(t.columns().size()));
    synchronized (t.rows()) {
      for (List<String> row : t.rows()) {
        out.println("| " + String.join(" | ", row) + " |");
      }
    }
    out.println();
  }

  /**
   * Prints the targets as Markdown.
   *
   * @param out where
   */
  public synchronized void printTargets(PrintStream out) {
    out.println("### Targets");
    out.println();
    out.println("| target | goal | measured | met |");
    out.println("|---|---|---|---|");
    for (Target t : targets) {
      out.println(
          "| "
              + t.name()
              + " | "
              + t.target()
              + " | "
              + t.measured()
              + " | "
              + (t.met() ? "yes" : "**no**")
              + " |");
    }
    out.println();
  }
}
