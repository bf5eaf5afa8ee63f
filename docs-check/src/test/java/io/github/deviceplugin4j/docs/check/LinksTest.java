package io.github.deviceplugin4j.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The link checker itself. */
class LinksTest {

  @TempDir Path root;

  @Test
  void anchorsFollowGitHubsRules() {
    assertThat(Links.slug("Registration modes and version negotiation"))
        .isEqualTo("registration-modes-and-version-negotiation");
    assertThat(Links.slug("Step 3: test it with the `FakeKubelet`"))
        .isEqualTo("step-3-test-it-with-the-fakekubelet");
    assertThat(Links.slug("Symptom → cause → fix")).isEqualTo("symptom--cause--fix");
    assertThat(Links.anchors("# A\n\n## A\n```\n# not a heading\n```\n## B [link](x.md)\n"))
        .containsExactly("a", "a-1", "b-link");
  }

  @Test
  void linksInCodeAreIgnoredAndAbsoluteOnesAreSkipped() {
    assertThat(
            Links.relativeLinks(
                "[a](a.md) [b](https://example.com) `[c](c.md)`\n```\n[d](d.md)\n```\n[e](#x)"))
        .containsExactly("a.md", "#x");
  }

  @Test
  void missingFilesAndHeadingsAreReported() throws IOException {
    Files.writeString(root.resolve("a.md"), "# Title\n\n## Part one\n");
    Path doc = root.resolve("doc.md");
    Files.writeString(
        doc, "# Doc\n[ok](a.md#part-one) [self](#doc) [gone](b.md) [bad](a.md#part-two)\n");
    assertThat(Links.check(root, doc))
        .containsExactly(
            "doc.md: link b.md points to a missing file",
            "doc.md: link a.md#part-two names no heading of a.md (its anchors: [title, part-one])");
  }
}
