package io.github.deviceplugin4j.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.docs.check.DocsTree;
import io.github.deviceplugin4j.docs.check.Links;
import io.github.deviceplugin4j.docs.check.Snippets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The repository's README.md and docs/*.md: every code block that names a source matches it, every
 * java block names one, every relative link resolves, and every page is linked from the README and
 * from docs/index.md.
 */
class DocsSnippetsTest {

  /** The documentation pages; each must exist and be linked from README.md and docs/index.md. */
  static final List<String> PAGES =
      List.of(
          "index.md",
          "getting-started.md",
          "concepts.md",
          "writing-a-backend.md",
          "testing.md",
          "deploying.md",
          "operations.md",
          "performance.md",
          "reliability.md",
          "building.md");

  final Path root = DocsTree.root();

  @Test
  void everyCodeBlockMatchesItsSource() throws IOException {
    List<String> problems = new ArrayList<>();
    long javaBlocks = 0;
    for (Path doc : DocsTree.markdown(root)) {
      Snippets.Result result = Snippets.check(root, doc);
      problems.addAll(result.problems());
      javaBlocks += result.blocks().stream().filter(b -> b.language().equals("java")).count();
      if (DocsTree.update() && !result.problems().isEmpty()) {
        Files.writeString(doc, result.updated());
      }
    }
    if (DocsTree.update()) {
      System.out.println("docs.snippets.update: rewrote stale blocks; remaining: " + problems);
      problems.removeIf(p -> p.contains("block differs from"));
    }
    assertThat(problems).as("snippet problems").isEmpty();
    // Guards against a parser that silently finds nothing.
    assertThat(javaBlocks).as("java blocks checked").isGreaterThanOrEqualTo(20);
  }

  @Test
  void everyRelativeLinkResolves() {
    List<String> problems = new ArrayList<>();
    for (Path doc : DocsTree.markdown(root)) {
      problems.addAll(Links.check(root, doc));
    }
    assertThat(problems).as("broken links").isEmpty();
  }

  @Test
  void everyPageExistsAndIsLinkedFromTheReadmeAndTheIndex() throws IOException {
    List<String> readme = Links.relativeLinks(Files.readString(root.resolve("README.md")));
    List<String> index = Links.relativeLinks(Files.readString(root.resolve("docs/index.md")));
    for (String page : PAGES) {
      assertThat(root.resolve("docs").resolve(page)).as("docs/" + page).isRegularFile();
      assertThat(readme).as("README.md links docs/" + page).contains("docs/" + page);
      if (!page.equals("index.md")) {
        assertThat(index).as("docs/index.md links " + page).contains(page);
      }
    }
  }
}
