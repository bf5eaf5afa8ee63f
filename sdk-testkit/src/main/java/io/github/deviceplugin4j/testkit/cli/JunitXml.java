package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Result;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;

/** JUnit XML (the Ant/Surefire format CI servers read) for a conformance run. */
final class JunitXml {
  private JunitXml() {}

  static String write(
      String resource,
      List<String> command,
      List<Result> results,
      Duration total,
      String eventLog,
      List<String> pluginOutput) {
    long failures = results.stream().filter(r -> r.verdict() == Verdict.FAIL).count();
    long skipped = results.stream().filter(r -> r.verdict() == Verdict.SKIP).count();
    StringBuilder b = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    b.append("<testsuite name=\"device-plugin-conformance\"")
        .append(attr("tests", String.valueOf(results.size())))
        .append(attr("failures", String.valueOf(failures)))
        .append(attr("errors", "0"))
        .append(attr("skipped", String.valueOf(skipped)))
        .append(attr("time", seconds(total.toMillis())))
        .append(attr("timestamp", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()))
        .append(">\n");
    b.append("  <properties>\n");
    b.append("    <property name=\"resource\"")
        .append(attr("value", resource == null ? "" : resource))
        .append("/>\n");
    b.append("    <property name=\"command\"")
        .append(attr("value", String.join(" ", command)))
        .append("/>\n");
    b.append("  </properties>\n");
    for (Result r : results) {
      b.append("  <testcase")
          .append(attr("classname", "device-plugin-conformance"))
          .append(attr("name", r.check().id + ": " + r.check().title))
          .append(attr("time", seconds(r.millis())));
      switch (r.verdict()) {
        case PASS ->
            b.append(">\n    <system-out>")
                .append(text(r.message()))
                .append("</system-out>\n  </testcase>\n");
        case FAIL ->
            b.append(">\n    <failure")
                .append(attr("message", r.message()))
                .append(attr("type", "ConformanceFailure"))
                .append(">")
                .append(text(r.message()))
                .append("</failure>\n  </testcase>\n");
        case SKIP ->
            b.append(">\n    <skipped")
                .append(attr("message", r.message()))
                .append("/>\n  </testcase>\n");
      }
    }
    b.append("  <system-out>")
        .append(
            text(eventLog + "\n\nplugin output (last lines):\n" + String.join("\n", pluginOutput)))
        .append("</system-out>\n");
    b.append("</testsuite>\n");
    return b.toString();
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
