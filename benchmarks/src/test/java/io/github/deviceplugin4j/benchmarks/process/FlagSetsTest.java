package io.github.deviceplugin4j.benchmarks.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Candidate flag sets for the {@code flags} scenario ({@link GoFlags#SETS_PROPERTY}) and the
 * environment a flag set gives its process.
 */
class FlagSetsTest {

  private static final JvmFlags.FlagSet IMAGE =
      new JvmFlags.FlagSet(
          "image", List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"));

  @Test
  void parseSets_changesTheImageFlagsAndCollectsEnvironmentEntries() {
    List<GoFlags.Config> sets =
        GoFlags.parseSets(
            List.of(
                "# a comment",
                "",
                "C2, one arena | +C2_LEAN MALLOC_ARENA_MAX=1 -Xmn2m",
                "no CDS |  !-Xshare:*   -Xshare:off "),
            IMAGE);

    assertThat(sets).extracting(GoFlags.Config::name).containsExactly("C2, one arena", "no CDS");
    JvmFlags.FlagSet c2 = sets.get(0).flags();
    assertThat(c2.flags())
        .startsWith("-XX:+UseSerialGC", "-Xshare:auto")
        .doesNotContain("-XX:TieredStopAtLevel=1")
        .containsSubsequence(GoFlags.C2_LEAN)
        .endsWith("-Xmn2m");
    assertThat(c2.env()).containsExactly(Map.entry("MALLOC_ARENA_MAX", "1"));
    assertThat(sets.get(1).flags().flags())
        .containsExactly("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:off");
    assertThat(sets.get(1).flags().env()).isEmpty();
  }

  @Test
  void parseSets_keepsTheImagesEnvironment() {
    JvmFlags.FlagSet image =
        new JvmFlags.FlagSet(
            "image", IMAGE.flags(), null, Map.of("METRICS_ADDRESS", "127.0.0.1:0"));
    JvmFlags.FlagSet set =
        GoFlags.parseSets(List.of("one arena | MALLOC_ARENA_MAX=1"), image).get(0).flags();
    assertThat(set.env())
        .containsExactly(
            Map.entry("METRICS_ADDRESS", "127.0.0.1:0"), Map.entry("MALLOC_ARENA_MAX", "1"));
    assertThat(GoFlags.configs(image))
        .filteredOn(c -> c.flags() != null)
        .allSatisfy(c -> assertThat(c.flags().env()).containsKey("METRICS_ADDRESS"));
  }

  @Test
  void parseSets_rejectsALineWithoutBarAndRemovingAFlagTheImageLacks() {
    assertThatThrownBy(() -> GoFlags.parseSets(List.of("just a name -Xmn2m"), IMAGE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name | tokens");
    assertThatThrownBy(() -> GoFlags.parseSets(List.of("x | !-Xmn2m"), IMAGE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("removes -Xmn2m");
  }

  @Test
  void theCommittedCandidateFile_parsesAgainstTheImageFlags() throws Exception {
    List<GoFlags.Config> sets =
        GoFlags.parseSets(
            Files.readAllLines(Path.of("flag-sets/c2-small.txt")),
            JvmFlags.withAppCds("image", Path.of("app.jsa")));

    assertThat(sets)
        .extracting(GoFlags.Config::name)
        .containsExactly(
            "C2 small",
            "C2 small, no AppCDS",
            "image flags, no AppCDS",
            "C2 only",
            "C1 at 400 calls");
    JvmFlags.FlagSet small = sets.get(0).flags();
    assertThat(small.flags())
        .doesNotContain("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=16m")
        .contains("-XX:ReservedCodeCacheSize=10m", "-XX:SharedArchiveFile=app.jsa");
    assertThat(small.env()).containsEntry("MALLOC_ARENA_MAX", "1");
    assertThat(sets.get(1).flags().flags()).noneMatch(f -> f.startsWith("-XX:SharedArchiveFile"));
    assertThat(sets.get(2).flags().flags()).containsExactlyElementsOf(JvmFlags.RECOMMENDED.flags());
    JvmFlags.FlagSet c2Only = sets.get(3).flags();
    assertThat(c2Only.flags())
        .doesNotContain("-XX:TieredStopAtLevel=1")
        .contains(
            "-XX:-TieredCompilation",
            "-XX:CICompilerCount=1",
            "-XX:TrimNativeHeapInterval=2000",
            "-XX:SharedArchiveFile=app.jsa");
    assertThat(c2Only.env()).containsEntry("MALLOC_ARENA_MAX", "1");
    assertThat(JvmFlags.RECOMMENDED.flags()).doesNotContain("-XX:CompileThresholdScaling=2");
    assertThat(sets.get(4).flags().flags())
        .contains("-XX:TieredStopAtLevel=1", "-XX:CompileThresholdScaling=2");
  }

  @Test
  void everyExampleImage_runsExactlyTheRecommendedFlags() throws Exception {
    // The images' flags are written out in each Dockerfile (a build context of its own) and in
    // RECOMMENDED, which the scenarios measure: they must not drift apart.
    List<Path> dockerfiles;
    try (var listed = Files.list(Path.of("..", "examples"))) {
      dockerfiles =
          listed.map(d -> d.resolve("Dockerfile")).filter(Files::isRegularFile).sorted().toList();
    }
    Pattern env = Pattern.compile("(?m)^ENV JDK_JAVA_OPTIONS=\"([^\"]*)\"");

    assertThat(dockerfiles).hasSizeGreaterThanOrEqualTo(5);
    for (Path dockerfile : dockerfiles) {
      Matcher m = env.matcher(Files.readString(dockerfile));
      assertThat(m.find()).as(dockerfile + " sets JDK_JAVA_OPTIONS").isTrue();
      List<String> flags = List.of(m.group(1).replace("\\\n", " ").trim().split("\\s+"));
      assertThat(flags).as(dockerfile.toString()).isEqualTo(JvmFlags.RECOMMENDED.flags());
    }
  }

  @Test
  void everyCommittedFile_parsesAgainstTheImageFlags() throws Exception {
    List<Path> files;
    try (var listed = Files.list(Path.of("flag-sets"))) {
      files = listed.filter(f -> f.toString().endsWith(".txt")).sorted().toList();
    }

    assertThat(files).hasSizeGreaterThanOrEqualTo(2);
    for (Path f : files) {
      List<GoFlags.Config> sets =
          GoFlags.parseSets(
              Files.readAllLines(f), JvmFlags.withAppCds("image", Path.of("app.jsa")));
      assertThat(sets).as(f.toString()).isNotEmpty();
    }
  }

  @Test
  void start_givesTheProcessTheFlagSetsEnvironment_explicitEntriesWin(@TempDir Path dir)
      throws Exception {
    Path source = dir.resolve("PrintEnv.java");
    Files.writeString(
        source,
        "class PrintEnv { public static void main(String[] a) {"
            + " System.out.println(System.getenv(\"DP4J_A\") + \",\" + System.getenv(\"DP4J_B\"));"
            + " } }");
    JvmFlags.FlagSet set =
        new JvmFlags.FlagSet(
            "env", List.of("-Xshare:auto"), null, Map.of("DP4J_A", "set", "DP4J_B", "set"));
    Path log = dir.resolve("out.log");

    try (JavaProcess p =
        JavaProcess.start(set, List.of(source.toString()), Map.of("DP4J_B", "explicit"), log)) {
      assertThat(p.waitFor(Duration.ofMinutes(1))).as("the source program exited").isTrue();
    }

    assertThat(Files.readString(log)).contains("set,explicit");
  }
}
