package io.github.deviceplugin4j.benchmarks;

/** One end-to-end benchmark: measures, and adds tables and targets to the report. */
public interface Scenario {

  /**
   * Short name, used by {@code --only}.
   *
   * @return name
   */
  String name();

  /**
   * Measures.
   *
   * @param ctx sizes and places
   * @param report where results go
   * @throws Exception when the measurement cannot be made
   */
  void run(BenchContext ctx, Report report) throws Exception;
}
