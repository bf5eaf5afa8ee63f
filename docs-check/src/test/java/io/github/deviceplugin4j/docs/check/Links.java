package io.github.deviceplugin4j.docs.check;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks the relative links of a Markdown file: the target file exists inside the repository, and a
 * {@code #fragment} into a Markdown file names one of its headings (GitHub's anchor rules).
 */
public final class Links {

  private static final Pattern LINK =
      Pattern.compile("\\[[^\\]]*]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern FENCE = Pattern.compile("^\\s*(`{3,}|~{3,}).*$");
  private static final Pattern INLINE_CODE = Pattern.compile("`[^`]*`");
  private static final Pattern HEADING = Pattern.compile("^\\s{0,3}#{1,6}\\s+(.*?)\\s*#*\\s*$");

  private Links() {}

  /**
   * The relative links of a Markdown text, outside code.
   *
   * @param markdown the text
   * @return targets as written, e.g. {@code concepts.md#health}
   */
  public static List<String> relativeLinks(String markdown) {
    List<String> out = new ArrayList<>();
    for (String line : prose(markdown)) {
      Matcher m = LINK.matcher(INLINE_CODE.matcher(line).replaceAll(""));
      while (m.find()) {
        String target = m.group(1);
        if (!target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          out.add(target);
        }
      }
    }
    return out;
  }

  /**
   * The anchors GitHub generates for the headings of a Markdown text.
   *
   * @param markdown the text
   * @return anchors in order, duplicates numbered ({@code -1}, {@code -2}, ...)
   */
  public static Set<String> anchors(String markdown) {
    Set<String> out = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String line : prose(markdown)) {
      Matcher m = HEADING.matcher(line);
      if (!m.matches()) {
        continue;
      }
      String slug = slug(m.group(1));
      int n = seen.merge(slug, 1, Integer::sum) - 1;
      out.add(n == 0 ? slug : slug + "-" + n);
    }
    return out;
  }

  /**
   * GitHub's anchor for a heading: links reduced to their text, lower case, punctuation other than
   * {@code -} and {@code _} removed, spaces turned into {@code -}.
   *
   * @param heading the heading text
   * @return the anchor
   */
  public static String slug(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)]\\([^)]*\\)", "$1");
    text = text.toLowerCase(Locale.ROOT);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        b.append(c);
      } else if (c == ' ') {
        b.append('-');
      }
    }
    return b.toString();
  }

  /**
   * Every broken relative link of a Markdown file.
   *
   * @param root the repository root
   * @param doc the Markdown file
   * @return one message per broken link
   */
  public static List<String> check(Path root, Path doc) {
    String text = read(doc);
    String name = root.relativize(doc).toString();
    List<String> problems = new ArrayList<>();
    for (String link : relativeLinks(text)) {
      int hash = link.indexOf('#');
      String path = hash < 0 ? link : link.substring(0, hash);
      String fragment = hash < 0 ? "" : link.substring(hash + 1);
      Path target = path.isEmpty() ? doc : doc.getParent().resolve(path).normalize();
      if (!target.startsWith(root)) {
        problems.add(name + ": link " + link + " leaves the repository");
        continue;
      }
      if (!Files.exists(target)) {
        problems.add(name + ": link " + link + " points to a missing file");
        continue;
      }
      if (!fragment.isEmpty() && target.toString().endsWith(".md")) {
        Set<String> anchors = anchors(read(target));
        if (!anchors.contains(fragment)) {
          problems.add(
              name
                  + ": link "
                  + link
                  + " names no heading of "
                  + root.relativize(target)
                  + " (its anchors: "
                  + anchors
                  + ")");
        }
      }
    }
    return problems;
  }

  private static List<String> prose(String markdown) {
    List<String> out = new ArrayList<>();
    String fence = null;
    for (String line : markdown.split("\r?\n", -1)) {
      Matcher f = FENCE.matcher(line);
      if (fence == null && f.matches()) {
        fence = f.group(1);
        continue;
      }
      if (fence != null) {
        String open = fence;
        String t = line.strip();
        if (t.startsWith(open) && t.chars().allMatch(c -> c == open.charAt(0))) {
          fence = null;
        }
        continue;
      }
      out.add(line);
    }
    return out;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }
}
