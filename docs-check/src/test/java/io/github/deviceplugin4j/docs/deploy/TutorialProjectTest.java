package io.github.deviceplugin4j.docs.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.docs.check.DocsTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * examples/getting-started is the tutorial as a project a vendor copies: its sources are the ones
 * this module compiles and tests (and getting-started.md shows), and its pom pins every plugin.
 */
class TutorialProjectTest {

  static final Path ROOT = DocsTree.root();
  static final Path PROJECT = ROOT.resolve("examples/getting-started");
  static final Path TESTED = ROOT.resolve("docs-check/src/test/java/com/example/accel");

  @Test
  void itsSourcesAreTheTestedTutorialSources() throws IOException {
    List<Path> copies = new ArrayList<>();
    try (Stream<Path> files = Files.walk(PROJECT.resolve("src"))) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(copies::add);
    }
    List<String> tested;
    try (Stream<Path> files = Files.list(TESTED)) {
      tested = files.map(f -> f.getFileName().toString()).sorted().toList();
    }

    assertThat(copies.stream().map(f -> f.getFileName().toString()).sorted())
        .containsExactlyElementsOf(tested);
    for (Path copy : copies) {
      assertThat(copy)
          .as("%s differs from the tested source: copy it over", ROOT.relativize(copy))
          .hasSameTextualContentAs(TESTED.resolve(copy.getFileName()));
    }
  }

  @Test
  void everyBuildPluginHasAPinnedVersion() throws Exception {
    Document pom =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(PROJECT.resolve("pom.xml").toFile());
    NodeList plugins = pom.getElementsByTagName("plugin");
    List<String> pinned = new ArrayList<>();
    List<String> unpinned = new ArrayList<>();
    for (int i = 0; i < plugins.getLength(); i++) {
      Element plugin = (Element) plugins.item(i);
      String id = plugin.getElementsByTagName("artifactId").item(0).getTextContent().strip();
      boolean managed =
          ((Element) plugin.getParentNode().getParentNode())
              .getTagName()
              .equals("pluginManagement");
      boolean versioned =
          plugin.getElementsByTagName("version").getLength() > 0
              && plugin.getElementsByTagName("version").item(0).getParentNode() == plugin;
      if (managed && versioned) {
        pinned.add(id);
      } else if (!managed && !versioned) {
        unpinned.add(id);
      }
    }

    assertThat(pinned)
        .contains(
            "maven-clean-plugin",
            "maven-resources-plugin",
            "maven-compiler-plugin",
            "maven-surefire-plugin",
            "maven-jar-plugin",
            "maven-shade-plugin",
            "maven-install-plugin",
            "maven-deploy-plugin",
            "maven-site-plugin",
            "maven-dependency-plugin");
    assertThat(unpinned).as("plugins used without a managed version").allMatch(pinned::contains);
  }
}
