package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Level;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Result;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;

/**
 * JUnit XML (the Ant/Surefire format CI servers read) for a conformance run.
 *
 * <p>The shape: a {@code <testsuites>} root with one {@code <testsuite>} per level, named {@code
 * device-plugin-conformance.required} and {@code device-plugin-conformance.recommended}; each
 * {@code <testcase>} has {@code classname} equal to its suite's name and a {@code level} property.
 * A failed required check is a {@code <failure>}; a failed recommended check is a {@code <skipped
 * message="recommended: ...">} with the message in {@code <system-out>} too, or a {@code <failure>}
 * in strict mode; a required check passed with a warning (a late re-registration) is a {@code
 * <skipped message="required: ...">}. A check run on each of several resources names the resource
 * in its testcase name ({@code allocate-each-device [example.com/a]: ...}); the suites' {@code
 * resource} property lists every resource checked. The kubelet's event log and the plugin's last
 * output lines are the required suite's {@code <system-out>}.
 */
final class JunitXml {
  static final String SUITE = "device-plugin-conformance";

  private JunitXml() {}

  static String write(
      String resource,
      List<String> command,
      List<Result> results,
      boolean strict,
      Duration total,
      String eventLog,
      List<String> pluginOutput) {
    StringBuilder b = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    b.append("<testsuites")
        .append(attr("name", SUITE))
        .append(attr("tests", String.valueOf(results.size())))
        .append(attr("failures", String.valueOf(count(results, Verdict.FAIL))))
        .append(attr("errors", "0"))
        .append(attr("skipped", String.valueOf(skippedInXml(results))))
        .append(attr("time", seconds(total.toMillis())))
        .append(">\n");
    String timestamp = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    boolean several =
        results.stream().map(Result::resource).filter(r -> !r.isEmpty()).distinct().count() > 1;
    for (Level level : Level.values()) {
      List<Result> rs = results.stream().filter(r -> r.check().level == level).toList();
      String name = SUITE + "." + level.id();
      b.append("  <testsuite")
          .append(attr("name", name))
          .append(attr("tests", String.valueOf(rs.size())))
          .append(attr("failures", String.valueOf(count(rs, Verdict.FAIL))))
          .append(attr("errors", "0"))
          .append(attr("skipped", String.valueOf(skippedInXml(rs))))
          .append(attr("time", seconds(rs.stream().mapToLong(Result::millis).sum())))
          .append(attr("timestamp", timestamp))
          .append(">\n");
      b.append("    <properties>\n");
      property(b, "    ", "level", level.id());
      property(b, "    ", "strict", String.valueOf(strict));
      property(b, "    ", "resource", resource == null ? "" : resource);
      property(b, "    ", "command", String.join(" ", command));
      b.append("    </properties>\n");
      for (Result r : rs) {
        testcase(b, name, r, several);
      }
      if (level == Level.REQUIRED) {
        b.append("    <system-out>")
            .append(
                text(
                    eventLog
                        + "\n\nplugin output (last lines):\n"
                        + String.join("\n", pluginOutput)))
            .append("</system-out>\n");
      }
      b.append("  </testsuite>\n");
    }
    b.append("</testsuites>\n");
    return b.toString();
  }

  private static void testcase(StringBuilder b, String classname, Result r, boolean several) {
    b.append("    <testcase")
        .append(attr("classname", classname))
        .append(
            attr(
                "name",
                r.check().id
                    + (several && !r.resource().isEmpty() ? " [" + r.resource() + "]" : "")
                    + ": "
                    + r.check().title))
        .append(attr("time", seconds(r.millis())))
        .append(">\n");
    b.append("      <properties>\n");
    property(b, "      ", "level", r.check().level.id());
    property(b, "      ", "verdict", r.verdict().name());
    b.append("      </properties>\n");
    switch (r.verdict()) {
      case PASS -> {}
      case FAIL ->
          b.append("      <failure")
              .append(attr("message", r.message()))
              .append(
                  attr(
                      "type",
                      r.check().level == Level.REQUIRED
                          ? "ConformanceFailure"
                          : "RecommendedConformanceFailure"))
              .append(">")
              .append(text(r.message()))
              .append("</failure>\n");
      case WARN ->
          b.append("      <skipped")
              .append(attr("message", r.check().level.id() + ": " + r.message()))
              .append("/>\n");
      case SKIP -> b.append("      <skipped").append(attr("message", r.message())).append("/>\n");
    }
    b.append("      <system-out>")
        .append(
            text(
                (r.verdict() == Verdict.WARN ? "WARN (" + r.check().level.id() + "): " : "")
                    + r.message()))
        .append("</system-out>\n");
    b.append("    </testcase>\n");
  }

  private static void property(StringBuilder b, String indent, String name, String value) {
    b.append(indent)
        .append("  <property")
        .append(attr("name", name))
        .append(attr("value", value))
        .append("/>\n");
  }

  private static long count(List<Result> results, Verdict verdict) {
    return results.stream().filter(r -> r.verdict() == verdict).count();
  }

  /** Skipped checks and warnings: both are written as {@code <skipped>}. */
  private static long skippedInXml(List<Result> results) {
    return count(results, Verdict.SKIP) + count(results, Verdict.WARN);
  }

  private static String seconds(long millis) {
    return String.format(Locale.ROOT, "%.3f", millis / 1000.0);
  }

  private static String attr(String name, String value) {
    return " " + name + "=\"" + escape(value, true) + "\"";
  }

  private static String text(String s) {
    return escape(s, false);
  }

  static String escape(String s, boolean attribute) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append(attribute ? "&quot;" : "\"");
        case '\n' -> b.append(attribute ? "&#10;" : "\n");
        case '\t' -> b.append(attribute ? "&#9;" : "\t");
        case '\r' -> b.append(attribute ? "&#13;" : "\r");
        default -> {
          if (c < 0x20 || c == 0xFFFE || c == 0xFFFF) {
            b.append('?'); // not allowed in XML 1.0
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.toString();
  }
}
