package io.github.deviceplugin4j.docs.check;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks the fenced code blocks of a Markdown file against the sources they come from.
 *
 * <p>A block is tied to a source by a marker comment on the line right above its opening fence:
 *
 * <pre>
 * &lt;!-- snippet: docs-check/src/test/java/com/example/accel/AccelBackend.java --&gt;
 * &lt;!-- snippet: sdk-core/src/test/java/.../MinimalFpgaPlugin.java#plugin --&gt;
 * </pre>
 *
 * <p>The path is relative to the repository root. Without {@code #region} the block holds the whole
 * file; with it, the lines between {@code tag::region[]} and {@code end::region[]} (in any comment
 * syntax), with their common leading indentation removed. Marker lines themselves never appear in a
 * block. Every {@code java} block needs a marker; blocks in other languages are checked when they
 * have one.
 */
public final class Snippets {

  private static final Pattern MARKER =
      Pattern.compile("^\\s*<!--\\s*snippet:\\s*([^#\\s]+)(?:#([A-Za-z0-9_.-]+))?\\s*-->\\s*$");
  private static final Pattern FENCE = Pattern.compile("^(\\s*)(`{3,}|~{3,})\\s*([\\w+-]*).*$");
  private static final Pattern TAG = Pattern.compile("(tag|end)::([A-Za-z0-9_.-]+)\\[\\]");

  private Snippets() {}

  /**
   * A snippet marker.
   *
   * @param path the source, relative to the repository root
   * @param region the region name, or empty for the whole file
   */
  public record Marker(String path, Optional<String> region) {
    @Override
    public String toString() {
      return path + region.map(r -> "#" + r).orElse("");
    }
  }

  /**
   * One fenced code block.
   *
   * @param fenceLine 1-based line number of the opening fence
   * @param language the info string's first word, e.g. {@code java}; empty when none
   * @param indent the indentation of the fence, removed from every content line
   * @param contentStart 0-based index of the first content line
   * @param contentEnd 0-based index of the closing fence (exclusive end of the content)
   * @param text the content, lines joined with {@code \n}
   * @param marker the marker on the line above, if any
   */
  public record Block(
      int fenceLine,
      String language,
      String indent,
      int contentStart,
      int contentEnd,
      String text,
      Optional<Marker> marker) {}

  /**
   * The result of checking one Markdown file.
   *
   * @param blocks every fenced block found
   * @param problems one message per problem, each naming the file and line
   * @param updated the file's text with stale blocks replaced by their sources' text
   */
  public record Result(List<Block> blocks, List<String> problems, String updated) {
    /**
     * How many blocks have a marker (and were compared).
     *
     * @return the number of checked blocks
     */
    public long checked() {
      return blocks.stream().filter(b -> b.marker().isPresent()).count();
    }
  }

  /**
   * Finds the fenced blocks of a Markdown text.
   *
   * @param markdown the text
   * @param problems receives structural problems (unclosed fence, marker without block)
   * @param docName the file name, for messages
   * @return the blocks in order
   */
  public static List<Block> blocks(String markdown, List<String> problems, String docName) {
    List<String> lines = lines(markdown);
    List<Block> blocks = new ArrayList<>();
    Optional<Marker> pending = Optional.empty();
    int pendingLine = -1;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      Matcher marker = MARKER.matcher(line);
      if (marker.matches()) {
        if (pending.isPresent()) {
          problems.add(
              docName + ":" + pendingLine + ": snippet marker is not followed by a code block");
        }
        pending = Optional.of(new Marker(marker.group(1), Optional.ofNullable(marker.group(2))));
        pendingLine = i + 1;
        continue;
      }
      Matcher fence = FENCE.matcher(line);
      if (!fence.matches()) {
        if (pending.isPresent()) {
          problems.add(
              docName
                  + ":"
                  + pendingLine
                  + ": snippet marker must be on the line right above the opening fence");
          pending = Optional.empty();
        }
        continue;
      }
      String indent = fence.group(1);
      String fenceChars = fence.group(2);
      int end = -1;
      for (int j = i + 1; j < lines.size(); j++) {
        String candidate = lines.get(j).strip();
        if (candidate.startsWith(fenceChars.substring(0, 3))
            && candidate.chars().allMatch(c -> c == fenceChars.charAt(0))
            && candidate.length() >= fenceChars.length()) {
          end = j;
          break;
        }
      }
      if (end < 0) {
        problems.add(docName + ":" + (i + 1) + ": code block is never closed");
        break;
      }
      List<String> content = new ArrayList<>();
      for (int j = i + 1; j < end; j++) {
        content.add(stripIndent(lines.get(j), indent));
      }
      blocks.add(
          new Block(
              i + 1, fence.group(3), indent, i + 1, end, String.join("\n", content), pending));
      pending = Optional.empty();
      i = end;
    }
    if (pending.isPresent()) {
      problems.add(
          docName + ":" + pendingLine + ": snippet marker is not followed by a code block");
    }
    return blocks;
  }

  /**
   * The text a marker stands for.
   *
   * @param source the source file's content
   * @param region the region, or empty for the whole file
   * @param sourceName the source's name, for messages
   * @return the expected block text
   * @throws IllegalArgumentException when the region is missing, repeated, unclosed or empty
   */
  public static String extract(String source, Optional<String> region, String sourceName) {
    List<String> lines = lines(source);
    if (region.isEmpty()) {
      List<String> kept = lines.stream().filter(l -> !TAG.matcher(l).find()).toList();
      return String.join("\n", trimTrailingBlank(kept));
    }
    String name = region.get();
    int start = -1;
    int end = -1;
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = TAG.matcher(lines.get(i));
      while (m.find()) {
        if (!m.group(2).equals(name)) {
          continue;
        }
        if (m.group(1).equals("tag")) {
          if (start >= 0) {
            throw new IllegalArgumentException(
                sourceName
                    + ": region '"
                    + name
                    + "' is opened twice (lines "
                    + (start + 1)
                    + " and "
                    + (i + 1)
                    + ")");
          }
          start = i;
        } else {
          if (start < 0) {
            throw new IllegalArgumentException(
                sourceName
                    + ": end::"
                    + name
                    + "[] on line "
                    + (i + 1)
                    + " comes before tag::"
                    + name
                    + "[]");
          }
          if (end >= 0) {
            throw new IllegalArgumentException(
                sourceName + ": region '" + name + "' is closed twice");
          }
          end = i;
        }
      }
    }
    if (start < 0) {
      throw new IllegalArgumentException(
          sourceName
              + " has no region '"
              + name
              + "' (add // tag::"
              + name
              + "[] and // end::"
              + name
              + "[] around the code)");
    }
    if (end < 0) {
      throw new IllegalArgumentException(
          sourceName
              + ": region '"
              + name
              + "' opened on line "
              + (start + 1)
              + " is never closed with end::"
              + name
              + "[]");
    }
    List<String> body = new ArrayList<>();
    for (int i = start + 1; i < end; i++) {
      if (!TAG.matcher(lines.get(i)).find()) {
        body.add(lines.get(i));
      }
    }
    body = trimTrailingBlank(dedent(body));
    while (!body.isEmpty() && body.get(0).isBlank()) {
      body.remove(0);
    }
    if (body.isEmpty()) {
      throw new IllegalArgumentException(sourceName + ": region '" + name + "' is empty");
    }
    return String.join("\n", body);
  }

  /**
   * Checks every block of a Markdown file.
   *
   * @param root the repository root
   * @param doc the Markdown file
   * @return blocks, problems and the text with stale blocks replaced
   */
  public static Result check(Path root, Path doc) {
    String docName = root.relativize(doc).toString();
    String markdown = read(doc);
    List<String> problems = new ArrayList<>();
    List<Block> blocks = blocks(markdown, problems, docName);
    List<String> lines = new ArrayList<>(lines(markdown));
    // Replace from the end so that earlier line indexes stay valid.
    for (int b = blocks.size() - 1; b >= 0; b--) {
      Block block = blocks.get(b);
      if (block.marker().isEmpty()) {
        if (block.language().equals("java")) {
          problems.add(
              docName
                  + ":"
                  + block.fenceLine()
                  + ": java block has no snippet marker; put the code in a compiled, tested source"
                  + " (e.g. under docs-check/src/test/java) and add <!-- snippet: path#region -->"
                  + " on the line above the fence");
        }
        continue;
      }
      Marker marker = block.marker().get();
      String expected;
      try {
        expected = expected(root, marker);
      } catch (IllegalArgumentException e) {
        problems.add(docName + ":" + (block.fenceLine() - 1) + ": " + e.getMessage());
        continue;
      }
      String actual = String.join("\n", trimTrailingBlank(lines(block.text())));
      if (!actual.equals(expected)) {
        problems.add(
            docName
                + ":"
                + block.fenceLine()
                + ": block differs from "
                + marker
                + "; "
                + firstDifference(expected, actual)
                + " (rerun with -Ddocs.snippets.update=true to copy the source into the doc)");
        List<String> replacement =
            lines(expected).stream().map(l -> l.isEmpty() ? l : block.indent() + l).toList();
        for (int i = block.contentEnd() - 1; i >= block.contentStart(); i--) {
          lines.remove(i);
        }
        lines.addAll(block.contentStart(), replacement);
      }
    }
    String updated = String.join("\n", lines) + (markdown.endsWith("\n") ? "\n" : "");
    return new Result(blocks, problems.stream().sorted().toList(), updated);
  }

  private static String expected(Path root, Marker marker) {
    Path relative = Path.of(marker.path());
    if (relative.isAbsolute() || relative.normalize().startsWith("..")) {
      throw new IllegalArgumentException(
          "snippet path " + marker.path() + " must be relative to the repository root");
    }
    Path source = root.resolve(relative).normalize();
    if (!Files.isRegularFile(source)) {
      throw new IllegalArgumentException("snippet source " + marker.path() + " does not exist");
    }
    return extract(read(source), marker.region(), marker.path());
  }

  private static String firstDifference(String expected, String actual) {
    List<String> e = lines(expected);
    List<String> a = lines(actual);
    for (int i = 0; i < Math.max(e.size(), a.size()); i++) {
      String el = i < e.size() ? e.get(i) : "<end of source>";
      String al = i < a.size() ? a.get(i) : "<end of block>";
      if (!el.equals(al)) {
        return "first difference on block line "
            + (i + 1)
            + ": source has ["
            + el
            + "], doc has ["
            + al
            + "]";
      }
    }
    return "they differ";
  }

  private static List<String> dedent(List<String> lines) {
    int min = Integer.MAX_VALUE;
    for (String l : lines) {
      if (!l.isBlank()) {
        int n = 0;
        while (n < l.length() && l.charAt(n) == ' ') {
          n++;
        }
        min = Math.min(min, n);
      }
    }
    if (min == Integer.MAX_VALUE || min == 0) {
      return lines.stream().map(l -> l.isBlank() ? "" : l).toList();
    }
    int cut = min;
    return lines.stream().map(l -> l.isBlank() ? "" : l.substring(cut)).toList();
  }

  private static List<String> trimTrailingBlank(List<String> lines) {
    List<String> out = new ArrayList<>(lines);
    while (!out.isEmpty() && out.get(out.size() - 1).isBlank()) {
      out.remove(out.size() - 1);
    }
    return out;
  }

  private static String stripIndent(String line, String indent) {
    return line.startsWith(indent) ? line.substring(indent.length()) : line.stripLeading();
  }

  /** The lines of a text; a final line break does not start another (empty) line. */
  private static List<String> lines(String text) {
    List<String> lines = new ArrayList<>(List.of(text.split("\r?\n", -1)));
    if (lines.size() > 1 && lines.get(lines.size() - 1).isEmpty()) {
      lines.remove(lines.size() - 1);
    }
    return lines;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }
}
