package io.github.deviceplugin4j.docs.records;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.github.deviceplugin4j.docs.check.DocsTree;
import io.github.deviceplugin4j.docs.check.Snippets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

/**
 * The GitHub Actions workflow, which cannot run here: it parses, runs the README's test command on
 * JDK 17 and 25, and runs the conformance job of docs/testing.md on the tutorial's plugin.
 */
class WorkflowTest {

  static final Path ROOT = DocsTree.root();
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  static JsonNode workflow() throws IOException {
    return YAML.readTree(ROOT.resolve(".github/workflows/ci.yml").toFile());
  }

  /** The README's test command: the quick start's line commented "all tests". */
  static String readmeTestCommand() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    List<String> commands = new ArrayList<>();
    for (Snippets.Block block : Snippets.blocks(readme, new ArrayList<>(), "README.md")) {
      if (block.language().equals("sh")) {
        for (String line : block.text().split("\n")) {
          if (line.matches(".*#\\s*all tests\\s*$")) {
            commands.add(line.substring(0, line.indexOf('#')).strip());
          }
        }
      }
    }
    assertThat(commands).as("README.md's command commented 'all tests'").hasSize(1);
    return commands.get(0);
  }

  /** The GitHub Actions block of docs/testing.md, parsed. */
  static JsonNode testingPageWorkflow() throws IOException {
    String page = Files.readString(ROOT.resolve("docs/testing.md"));
    for (Snippets.Block block : Snippets.blocks(page, new ArrayList<>(), "testing.md")) {
      if (block.language().equals("yaml") && block.text().contains("runs-on:")) {
        return YAML.readTree(block.text());
      }
    }
    throw new AssertionError("docs/testing.md has no GitHub Actions block");
  }

  static List<JsonNode> steps(JsonNode job) {
    return StreamSupport.stream(job.path("steps").spliterator(), false).toList();
  }

  static Optional<JsonNode> step(JsonNode job, String name) {
    return steps(job).stream().filter(s -> s.path("name").asText().equals(name)).findFirst();
  }

  static String run(JsonNode step) {
    return step.path("run").asText().strip();
  }

  @Test
  void everyPushAndPullRequestRunsIt() throws IOException {
    JsonNode on = workflow().path("on");

    assertThat(on.has("push")).isTrue();
    assertThat(on.has("pull_request")).isTrue();
  }

  @Test
  void theTestJobRunsTheReadmesTestCommandOnJdk17And25() throws IOException {
    JsonNode test = workflow().path("jobs").path("test");
    List<String> jdks =
        StreamSupport.stream(test.path("strategy").path("matrix").path("java").spliterator(), false)
            .map(JsonNode::asText)
            .toList();
    JsonNode setupJava =
        steps(test).stream()
            .filter(s -> s.path("uses").asText().startsWith("actions/setup-java@"))
            .findFirst()
            .orElseThrow();

    assertThat(jdks).containsExactlyInAnyOrder("17", "25");
    assertThat(setupJava.path("with").path("distribution").asText()).isEqualTo("temurin");
    assertThat(setupJava.path("with").path("java-version").asText())
        .isEqualTo("${{ matrix.java }}");
    assertThat(setupJava.path("with").path("cache").asText()).isEqualTo("maven");
    assertThat(steps(test).stream().map(WorkflowTest::run).filter(r -> !r.isEmpty()))
        .containsExactly(readmeTestCommand());
    assertThat(readmeTestCommand()).isEqualTo("./mvnw -B verify");
  }

  @Test
  void theConformanceJobIsTheTestingPagesJobOnTheTutorialPlugin() throws IOException {
    JsonNode ours = workflow().path("jobs").path("conformance");
    JsonNode documented = testingPageWorkflow().path("jobs").path("conformance");
    String documentedConform = run(step(documented, "conformance").orElseThrow());
    String ourConform = run(step(ours, "conformance").orElseThrow());
    String prefix = documentedConform.substring(0, documentedConform.indexOf(" -- ") + 4);

    assertThat(prefix).startsWith("java -jar deviceplugin4j-testkit-cli.jar conform");
    assertThat(ourConform)
        .as("the documented conform command, on the tutorial's runnable jar")
        .startsWith(prefix)
        .endsWith(" -- java -jar examples/getting-started/target/accel-plugin.jar node");
    assertThat(run(step(ours, "fetch the fake kubelet").orElseThrow()))
        .isEqualTo(run(step(documented, "fetch the fake kubelet").orElseThrow()));
    assertThat(ours.path("env").path("DP4J_VERSION").asText())
        .as("the SDK this commit builds")
        .isEqualTo(projectVersion());
    JsonNode upload =
        steps(ours).stream()
            .filter(s -> s.path("uses").asText().startsWith("actions/upload-artifact@"))
            .findFirst()
            .orElseThrow();
    JsonNode documentedUpload =
        steps(documented).stream()
            .filter(s -> s.path("uses").asText().startsWith("actions/upload-artifact@"))
            .findFirst()
            .orElseThrow();
    assertThat(upload).isEqualTo(documentedUpload);
    assertThat(steps(ours).stream().map(WorkflowTest::run))
        .contains(
            "./mvnw -B -q install -DskipTests",
            "./mvnw -B -f examples/getting-started/pom.xml package");
  }

  /** The repository's version, from the root pom's first version element after the parent's id. */
  static String projectVersion() throws IOException {
    String pom = Files.readString(ROOT.resolve("pom.xml"));
    int id = pom.indexOf("<artifactId>deviceplugin4j-parent</artifactId>");
    int start = pom.indexOf("<version>", id) + "<version>".length();
    return pom.substring(start, pom.indexOf("</version>", start));
  }
}
