package io.github.deviceplugin4j.release;

import static io.github.deviceplugin4j.release.ReactorModules.child;
import static io.github.deviceplugin4j.release.ReactorModules.children;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.release.ReactorModules.Module;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * Checks the release set that this build staged into {@code target/staging} (the deploy plugin's
 * {@code stage} execution of every published module, verify phase): what Maven Central would get.
 */
class StagedReleaseIT {

  static final String GROUP = "io.github.deviceplugin4j";

  /** Published whatever else changes: the check fails if one of these is gone or unpublished. */
  static final Set<String> KNOWN_PUBLISHED =
      Set.of(
          "deviceplugin4j-parent",
          "deviceplugin4j-bom",
          "deviceplugin4j-proto",
          "deviceplugin4j-core",
          "deviceplugin4j-testkit",
          "deviceplugin4j-cdi",
          "deviceplugin4j-dra",
          "deviceplugin4j-dra-testkit",
          "deviceplugin4j-dra-conform",
          "deviceplugin4j-micrometer");

  /** Extra jars some modules publish, by classifier. */
  static final Map<String, List<String>> EXTRA_JARS =
      Map.of(
          "deviceplugin4j-testkit", List.of("cli"), "deviceplugin4j-dra-conform", List.of("cli"));

  static final Path ROOT = Path.of(System.getProperty("release.root", "..")).normalize();
  static final Path STAGING = Path.of(System.getProperty("release.staging", "../target/staging"));
  static final String VERSION = System.getProperty("release.version", "0.1.0-SNAPSHOT");

  @Test
  void everyKnownPublishedArtifactIsAModuleThatIsPublished() {
    Set<String> published = published(ReactorModules.read(ROOT));

    assertThat(published)
        .as("published modules (a module is published unless it sets publish.skip=true)")
        .containsAll(KNOWN_PUBLISHED);
  }

  @Test
  void everyPublishedModuleIsStagedWithJarsSbomAndReleaseMetadata() throws IOException {
    Assumptions.assumeFalse(
        System.getProperty("release.offline", "").endsWith("true"),
        "Maven runs offline (-o) and its deploy plugin refuses to deploy, even to a file"
            + " repository: nothing was staged; build without -o to check the release set");
    List<String> problems = new ArrayList<>();
    List<String> report = new ArrayList<>();
    for (Module module : ReactorModules.read(ROOT)) {
      if (module.published()) {
        check(module, problems, report);
      }
    }
    System.out.println("Staged release set in " + STAGING + ":");
    report.forEach(line -> System.out.println("  " + line));

    assertThat(problems)
        .as("staged release set in " + STAGING + " (run ./mvnw -B verify from the root)")
        .isEmpty();
  }

  private static void check(Module module, List<String> problems, List<String> report)
      throws IOException {
    String artifactId = module.artifactId();
    String coordinates = GROUP + ":" + artifactId + ":" + VERSION;
    Path dir = STAGING.resolve(GROUP.replace('.', '/')).resolve(artifactId).resolve(VERSION);
    if (!Files.isDirectory(dir)) {
      problems.add(
          coordinates
              + ": not staged (no "
              + dir
              + "); a published module (publish.skip is not true) must be deployed by the stage"
              + " execution");
      return;
    }
    String base = artifactId + "-" + fileVersion(dir, coordinates, problems);
    List<String> pieces = new ArrayList<>(List.of(".pom"));
    if (!module.packaging().equals("pom")) {
      pieces.addAll(List.of(".jar", "-sources.jar", "-javadoc.jar", "-cyclonedx.json"));
      EXTRA_JARS.getOrDefault(artifactId, List.of()).forEach(c -> pieces.add("-" + c + ".jar"));
    }
    List<String> present = new ArrayList<>();
    for (String piece : pieces) {
      Path file = dir.resolve(base + piece);
      if (!Files.isRegularFile(file) || Files.size(file) == 0) {
        problems.add(
            coordinates + ": missing " + file.getFileName() + " (" + describe(piece) + ")");
        continue;
      }
      present.add(piece.substring(1));
      checkContent(coordinates, artifactId, piece, file, problems);
    }
    checkPom(coordinates, dir.resolve(base + ".pom"), problems);
    report.add(coordinates + " [" + String.join(", ", present) + "]");
  }

  /** The version in file names: for a snapshot the timestamp of the last deploy, from metadata. */
  private static String fileVersion(Path dir, String coordinates, List<String> problems) {
    if (!VERSION.endsWith("-SNAPSHOT")) {
      return VERSION;
    }
    Path metadata = dir.resolve("maven-metadata.xml");
    if (!Files.isRegularFile(metadata)) {
      problems.add(coordinates + ": missing maven-metadata.xml in " + dir);
      return VERSION;
    }
    Element snapshot =
        child(ReactorModules.parse(metadata).getDocumentElement(), "versioning")
            .flatMap(v -> child(v, "snapshot"))
            .orElseThrow(() -> new IllegalStateException(metadata + " has no <snapshot>"));
    String timestamp = child(snapshot, "timestamp").orElseThrow().getTextContent().trim();
    String build = child(snapshot, "buildNumber").orElseThrow().getTextContent().trim();
    return VERSION.substring(0, VERSION.length() - "SNAPSHOT".length()) + timestamp + "-" + build;
  }

  private static String describe(String piece) {
    return switch (piece) {
      case ".pom" -> "the POM";
      case ".jar" -> "the jar";
      case "-sources.jar" -> "sources jar: maven-source-plugin";
      case "-javadoc.jar" -> "Javadoc jar: maven-javadoc-plugin";
      case "-cyclonedx.json" -> "SBOM: cyclonedx-maven-plugin";
      default -> "classifier " + piece.substring(1, piece.lastIndexOf('.'));
    };
  }

  private static void checkContent(
      String coordinates, String artifactId, String piece, Path file, List<String> problems)
      throws IOException {
    switch (piece) {
      case ".jar" -> {
        try (JarFile jar = new JarFile(file.toFile())) {
          String expected =
              "io.github.deviceplugin4j."
                  + artifactId.substring("deviceplugin4j-".length()).replace('-', '.');
          String name =
              jar.getManifest() == null
                  ? null
                  : jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
          if (!expected.equals(name)) {
            problems.add(
                coordinates + ": Automatic-Module-Name is " + name + ", expected " + expected);
          }
        }
      }
      case "-sources.jar" -> {
        try (JarFile jar = new JarFile(file.toFile())) {
          if (jar.stream().noneMatch(e -> e.getName().endsWith(".java"))) {
            problems.add(coordinates + ": the sources jar holds no .java file");
          }
        }
      }
      case "-javadoc.jar" -> {
        try (JarFile jar = new JarFile(file.toFile())) {
          if (jar.getEntry("index.html") == null) {
            problems.add(coordinates + ": the Javadoc jar has no index.html");
          }
        }
      }
      case "-cyclonedx.json" -> {
        String json = Files.readString(file, StandardCharsets.UTF_8);
        if (!json.contains("\"bomFormat\" : \"CycloneDX\"")
            && !json.contains("\"bomFormat\":\"CycloneDX\"")) {
          problems.add(coordinates + ": " + file.getFileName() + " is not a CycloneDX SBOM");
        }
      }
      default -> {}
    }
  }

  /** What Central requires of a POM, own or inherited from a staged parent POM. */
  private static void checkPom(String coordinates, Path pomFile, List<String> problems) {
    if (!Files.isRegularFile(pomFile)) {
      return;
    }
    Element pom = ReactorModules.parse(pomFile).getDocumentElement();
    for (String own : List.of("name", "description")) {
      if (child(pom, own).map(e -> e.getTextContent().isBlank()).orElse(true)) {
        problems.add(coordinates + ": the POM has no <" + own + "> of its own");
      }
    }
    Map<String, String> required =
        Map.of(
            "url", "url",
            "licenses/license/name", "licenses",
            "licenses/license/url", "licenses",
            "developers/developer/name", "developers",
            "scm/url", "scm",
            "scm/connection", "scm",
            "issueManagement/url", "issueManagement");
    for (String path : new TreeSet<>(required.keySet())) {
      if (inherited(pom, path).isEmpty()) {
        problems.add(coordinates + ": the POM (with its parents) has no <" + path + ">");
      }
    }
  }

  /** The text at a path in this POM, else in its parent POM as staged. */
  private static Optional<String> inherited(Element pom, String path) {
    Optional<String> own = at(pom, path.split("/"), 0);
    if (own.isPresent()) {
      return own;
    }
    Optional<Element> parent = child(pom, "parent");
    if (parent.isEmpty()) {
      return Optional.empty();
    }
    String group = child(parent.get(), "groupId").orElseThrow().getTextContent().trim();
    String artifact = child(parent.get(), "artifactId").orElseThrow().getTextContent().trim();
    String version = child(parent.get(), "version").orElseThrow().getTextContent().trim();
    if (!group.equals(GROUP) || !version.equals(VERSION)) {
      return Optional.empty();
    }
    Path dir = STAGING.resolve(GROUP.replace('.', '/')).resolve(artifact).resolve(version);
    List<String> ignored = new ArrayList<>();
    Path parentPom = dir.resolve(artifact + "-" + fileVersion(dir, artifact, ignored) + ".pom");
    if (!ignored.isEmpty() || !Files.isRegularFile(parentPom)) {
      return Optional.empty();
    }
    return inherited(ReactorModules.parse(parentPom).getDocumentElement(), path);
  }

  private static Optional<String> at(Element element, String[] path, int index) {
    if (index == path.length) {
      String text = element.getTextContent().trim();
      return text.isEmpty() ? Optional.empty() : Optional.of(text);
    }
    for (Element next : children(element, path[index])) {
      Optional<String> found = at(next, path, index + 1);
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
  }

  private static Set<String> published(List<Module> modules) {
    return modules.stream()
        .filter(Module::published)
        .map(Module::artifactId)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static List<Element> elements(org.w3c.dom.NodeList list) {
    List<Element> out = new ArrayList<>();
    for (int i = 0; i < list.getLength(); i++) {
      out.add((Element) list.item(i));
    }
    return out;
  }
}
