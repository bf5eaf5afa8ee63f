package io.github.deviceplugin4j.docs.check;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Where the repository's Markdown lives, for the docs tests. */
public final class DocsTree {

  private DocsTree() {}

  /**
   * The repository root: the {@code docs.root} system property (set by the build), else the first
   * directory upwards from the working directory that holds {@code README.md} and {@code docs/}.
   *
   * @return the absolute, normalised root
   */
  public static Path root() {
    String property = System.getProperty("docs.root");
    if (property != null && !property.isBlank()) {
      return Path.of(property).toAbsolutePath().normalize();
    }
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("README.md")) && Files.isDirectory(p.resolve("docs"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "cannot find the repository root: set -Ddocs.root or run from inside the repository");
  }

  /**
   * The Markdown files whose snippets and links are checked: README.md, the project's records
   * (CHANGELOG.md, CONTRIBUTING.md, SECURITY.md) and docs/*.md.
   *
   * @param root the repository root
   * @return the files, README and the records first, then docs/ in name order
   */
  public static List<Path> markdown(Path root) {
    List<Path> files = new ArrayList<>();
    files.add(root.resolve("README.md"));
    for (String record : List.of("CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md")) {
      files.add(root.resolve(record));
    }
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(files::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return files;
  }

  /**
   * Whether the build asked to rewrite stale snippets ({@code -Ddocs.snippets.update=true}).
   *
   * @return true to rewrite
   */
  public static boolean update() {
    return Boolean.parseBoolean(System.getProperty("docs.snippets.update", "false"));
  }
}
