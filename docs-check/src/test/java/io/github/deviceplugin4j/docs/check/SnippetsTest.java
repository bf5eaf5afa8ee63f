package io.github.deviceplugin4j.docs.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker itself: it must catch every kind of drift, or the docs check proves nothing. */
class SnippetsTest {

  @TempDir Path root;

  static final String SOURCE =
      """
      package demo;

      class Demo {
        void run() {
          // tag::body[]
          int a = 1;
          // tag::inner[]
          int b = 2;
          // end::inner[]
          System.out.println(a + b);
          // end::body[]
        }
      }
      """;

  @BeforeEach
  void writeSource() throws IOException {
    Files.createDirectories(root.resolve("src"));
    Files.writeString(root.resolve("src/Demo.java"), SOURCE);
  }

  private Snippets.Result check(String markdown) throws IOException {
    Path doc = root.resolve("doc.md");
    Files.writeString(doc, markdown);
    return Snippets.check(root, doc);
  }

  @Test
  void aRegionIsDedentedAndNestedMarkersAreDropped() {
    assertThat(Snippets.extract(SOURCE, Optional.of("body"), "Demo.java"))
        .isEqualTo("int a = 1;\nint b = 2;\nSystem.out.println(a + b);");
    assertThat(Snippets.extract(SOURCE, Optional.of("inner"), "Demo.java")).isEqualTo("int b = 2;");
  }

  @Test
  void aWholeFileKeepsEverythingButTheMarkers() {
    assertThat(Snippets.extract(SOURCE, Optional.empty(), "Demo.java"))
        .startsWith("package demo;\n\nclass Demo {")
        .doesNotContain("tag::")
        .doesNotContain("end::")
        .endsWith("  }\n}");
  }

  @Test
  void aMatchingBlockPasses() throws IOException {
    Snippets.Result r =
        check(
            """
            # Title

            <!-- snippet: src/Demo.java#inner -->
            ```java
            int b = 2;
            ```
            """);
    assertThat(r.problems()).isEmpty();
    assertThat(r.checked()).isEqualTo(1);
  }

  @Test
  void aBlockIndentedInAListMatchesItsSource() throws IOException {
    Snippets.Result r =
        check(
            """
            1. Step one:

               <!-- snippet: src/Demo.java#body -->
               ```java
               int a = 1;
               int b = 2;
               System.out.println(a + b);
               ```
            """);
    assertThat(r.problems()).isEmpty();
  }

  @Test
  void aStaleBlockFailsAndTheUpdateCopiesTheSource() throws IOException {
    Snippets.Result r =
        check(
            """
            <!-- snippet: src/Demo.java#inner -->
            ```java
            int b = 3;
            ```
            text after
            """);
    assertThat(r.problems())
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith("doc.md:2: block differs from src/Demo.java#inner")
        .contains("source has [int b = 2;], doc has [int b = 3;]");
    assertThat(r.updated())
        .isEqualTo(
            """
            <!-- snippet: src/Demo.java#inner -->
            ```java
            int b = 2;
            ```
            text after
            """);
  }

  @Test
  void aJavaBlockWithoutMarkerFails() throws IOException {
    Snippets.Result r = check("```java\nint x;\n```\n");
    assertThat(r.problems())
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith("doc.md:1: java block has no snippet marker");
  }

  @Test
  void otherBlocksNeedNoMarker() throws IOException {
    assertThat(check("```sh\nls\n```\n\n```yaml\na: 1\n```\n").problems()).isEmpty();
  }

  @Test
  void aMarkerOnAMissingFileOrRegionFails() throws IOException {
    Snippets.Result r =
        check(
            """
            <!-- snippet: src/Missing.java#x -->
            ```java
            x
            ```

            <!-- snippet: src/Demo.java#nope -->
            ```java
            x
            ```
            """);
    assertThat(r.problems())
        .containsExactly(
            "doc.md:1: snippet source src/Missing.java does not exist",
            "doc.md:6: src/Demo.java has no region 'nope' (add // tag::nope[] and // end::nope[]"
                + " around the code)");
  }

  @Test
  void aMarkerMustSitRightAboveItsBlock() throws IOException {
    Snippets.Result r =
        check(
            """
            <!-- snippet: src/Demo.java#inner -->

            ```java
            int b = 2;
            ```
            """);
    assertThat(r.problems())
        .contains("doc.md:1: snippet marker must be on the line right above the opening fence")
        .anyMatch(p -> p.startsWith("doc.md:3: java block has no snippet marker"));
  }

  @Test
  void aMarkerMayNotLeaveTheRepository() throws IOException {
    assertThat(check("<!-- snippet: ../etc/passwd -->\n```text\nx\n```\n").problems())
        .containsExactly(
            "doc.md:1: snippet path ../etc/passwd must be relative to the repository root");
  }

  @Test
  void brokenRegionsAreReported() {
    assertThatThrownBy(() -> Snippets.extract("// tag::a[]\nx\n", Optional.of("a"), "F.java"))
        .hasMessageContaining("never closed");
    assertThatThrownBy(
            () -> Snippets.extract("// tag::a[]\n// end::a[]\n", Optional.of("a"), "F.java"))
        .hasMessageContaining("is empty");
    assertThatThrownBy(
            () ->
                Snippets.extract(
                    "// tag::a[]\nx\n// end::a[]\n// tag::a[]\n", Optional.of("a"), "F.java"))
        .hasMessageContaining("opened twice");
  }

  @Test
  void anUnclosedFenceIsReported() throws IOException {
    assertThat(check("```sh\nls\n").problems())
        .containsExactly("doc.md:1: code block is never closed");
  }
}
