package io.github.deviceplugin4j.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Log lines the pages quote are lines the code can print: a reader greps a plugin's log for what
 * operations.md or getting-started.md shows, so a message whose wording changed in the code must
 * change on the page too. Two kinds of quote are checked: a transcript line ({@code [thread] INFO
 * io.github.deviceplugin4j.X - message}) and a backticked message in a table row that starts with
 * its level ({@code | WARN | `message ...` | ...}), where {@code ...} stands for any text. Each
 * must match one of the messages in the main sources (string literals, joined where the code
 * concatenates them): either the message, SLF4J's {@code {}} standing for any text, matches the
 * quote as printed, or the quote, its {@code ...} standing for any text, matches the message with
 * its {@code {}} filled in. Which message belongs in which situation is the page's business; this
 * only keeps the wording true.
 */
class QuotedLogLinesTest {

  private static final Pattern TRANSCRIPT =
      Pattern.compile(
          "\\b(?:TRACE|DEBUG|INFO|WARN|ERROR) io\\.github\\.deviceplugin4j\\.[\\w.]+ - (.+)$");
  private static final Pattern TABLE_ROW =
      Pattern.compile("^\\|\\s*(?:DEBUG|INFO|WARN|ERROR)\\s*\\|([^|]*)\\|");
  private static final Pattern BACKTICKED = Pattern.compile("`([^`]+)`");
  private static final Pattern LITERALS =
      Pattern.compile("(?:\"(?:[^\"\\\\\\n]|\\\\.)*\"\\s*(?:\\+\\s*)?)+");
  private static final Pattern ONE_LITERAL = Pattern.compile("\"((?:[^\"\\\\\\n]|\\\\.)*)\"");

  @Test
  void everyQuotedLogLineMatchesAMessageTheCodeCanPrint() throws IOException {
    Path root = DocsTree.root();
    List<Message> messages = messages(root);
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Path page : pages(root)) {
      List<String> lines = Files.readAllLines(page);
      for (int i = 0; i < lines.size(); i++) {
        for (Quote quote : quotes(lines.get(i))) {
          checked++;
          if (messages.stream().noneMatch(quote::matches)) {
            wrong.add(root.relativize(page) + ":" + (i + 1) + ": " + quote.text());
          }
        }
      }
    }
    assertThat(checked).as("quoted log lines found").isPositive();
    assertThat(wrong)
        .as(
            "log lines quoted in the docs that no message in the main sources can print"
                + " (change the page to the code's wording)")
        .isEmpty();
  }

  @Test
  void aQuoteInTheOldWordingIsCaught_andTheCurrentWordingPasses() {
    Message message = new Message("Registered {} with the kubelet again after {} ms without it");
    Quote stale =
        quotes("[w] INFO io.github.deviceplugin4j.core.X - Registered a/b with the kubelet again")
            .get(0);
    Quote printed =
        quotes(
                "[w] INFO io.github.deviceplugin4j.core.X - Registered a/b with the kubelet again"
                    + " after 46 ms without it")
            .get(0);
    Quote summarised =
        quotes("| INFO | `Registered a/b with the kubelet again after ... ms without it` | x |")
            .get(0);

    assertThat(stale.matches(message)).isFalse();
    assertThat(printed.matches(message)).isTrue();
    assertThat(summarised.matches(message)).isTrue();
  }

  /** A message of the code: its text, and its text as a regex ({@code {}} for any text). */
  record Message(String text, Pattern pattern) {
    Message(String text) {
      this(text, wildcards(text, List.of("{}")));
    }
  }

  /** A quote of a page: its text, and its text as a regex ({@code ...} for any text). */
  record Quote(String text, Pattern pattern) {
    Quote(String text) {
      this(text, wildcards(text, List.of("(...)", "...", "…")));
    }

    boolean matches(Message m) {
      return m.pattern().matcher(text).matches()
          || pattern.matcher(m.text().replace("{}", "X")).matches();
    }
  }

  /** The quotes on one line. */
  private static List<Quote> quotes(String line) {
    List<Quote> out = new ArrayList<>();
    Matcher t = TRANSCRIPT.matcher(line);
    if (t.find()) {
      out.add(new Quote(t.group(1)));
    }
    Matcher row = TABLE_ROW.matcher(line);
    if (row.find()) {
      Matcher b = BACKTICKED.matcher(row.group(1));
      while (b.find()) {
        out.add(new Quote(b.group(1)));
      }
    }
    return out;
  }

  /** {@code text} as a regex in which each of {@code holes} stands for any text. */
  static Pattern wildcards(String text, List<String> holes) {
    StringBuilder regex = new StringBuilder();
    int at = 0;
    while (true) {
      int next = -1;
      String hole = null;
      for (String h : holes) {
        int i = text.indexOf(h, at);
        if (i >= 0 && (next < 0 || i < next)) {
          next = i;
          hole = h;
        }
      }
      if (next < 0) {
        break;
      }
      regex.append(Pattern.quote(text.substring(at, next))).append(".*?");
      at = next + hole.length();
    }
    regex.append(Pattern.quote(text.substring(at)));
    return Pattern.compile(regex.toString(), Pattern.DOTALL);
  }

  /** Every string literal of the main sources, joined where the code concatenates them. */
  private static List<Message> messages(Path root) throws IOException {
    Set<String> out = new LinkedHashSet<>();
    for (Path source : sources(root)) {
      Matcher m = LITERALS.matcher(Files.readString(source));
      while (m.find()) {
        StringBuilder joined = new StringBuilder();
        Matcher one = ONE_LITERAL.matcher(m.group());
        while (one.find()) {
          joined.append(one.group(1));
        }
        out.add(joined.toString().replace("\\\"", "\"").replace("\\\\", "\\"));
      }
    }
    return out.stream().map(Message::new).toList();
  }

  private static List<Path> sources(Path root) throws IOException {
    List<Path> out = new ArrayList<>();
    for (String dir : List.of("sdk-core", "sdk-dra", "sdk-cdi", "sdk-micrometer", "examples")) {
      try (Stream<Path> s = Files.walk(root.resolve(dir))) {
        s.filter(p -> p.toString().endsWith(".java"))
            .filter(p -> p.toString().contains("/src/main/java/"))
            .forEach(out::add);
      }
    }
    return out;
  }

  private static List<Path> pages(Path root) {
    List<Path> out = new ArrayList<>(DocsTree.markdown(root));
    try (Stream<Path> s = Files.list(root.resolve("examples"))) {
      s.map(p -> p.resolve("README.md")).filter(Files::isRegularFile).sorted().forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
