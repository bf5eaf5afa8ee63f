package io.github.deviceplugin4j.core;

import java.util.List;
import java.util.Objects;

/**
 * The outcome of a liveness or readiness check of a {@link DevicePluginHost}: whether it passed,
 * and otherwise what is wrong, one short text per problem.
 *
 * <pre>{@code
 * ProbeResult live = host.liveness(Duration.ofSeconds(5));
 * if (!live.ok()) {
 *   log.error("plugin stuck: {}", live.describe());
 * }
 * }</pre>
 *
 * @param ok whether the check passed
 * @param problems what is wrong; empty when {@code ok}
 */
public record ProbeResult(boolean ok, List<String> problems) {

  /**
   * Copies the problems.
   *
   * @param ok see {@link #ok()}
   * @param problems see {@link #problems()}
   */
  public ProbeResult {
    problems = List.copyOf(Objects.requireNonNull(problems, "problems"));
  }

  /**
   * A passed check.
   *
   * @return ok with no problems
   */
  public static ProbeResult passed() {
    return new ProbeResult(true, List.of());
  }

  /**
   * A check that passes when there is no problem.
   *
   * @param problems what is wrong
   * @return the result
   */
  public static ProbeResult of(List<String> problems) {
    return new ProbeResult(problems.isEmpty(), problems);
  }

  /**
   * One line for a probe's answer or a log: {@code "ok"}, or the problems joined by {@code "; "}.
   *
   * @return the text
   */
  public String describe() {
    return ok ? "ok" : String.join("; ", problems);
  }
}
