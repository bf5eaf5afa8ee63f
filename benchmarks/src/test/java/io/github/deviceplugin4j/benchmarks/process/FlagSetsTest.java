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

  private static final Path EXAMPLES = Path.of("..", "examples");

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
  void everyExampleImage_runsTheFlagsTheHarnessReadsFromTheFpgaDockerfile() throws Exception {
    // The images' flags are written out in each Dockerfile (a build context of its own); the
    // harness reads the FPGA example's (AotTraining.imageFlags): they must not drift apart.
    List<Path> dockerfiles;
    try (var listed = Files.list(EXAMPLES)) {
      dockerfiles =
          listed.map(d -> d.resolve("Dockerfile")).filter(Files::isRegularFile).sorted().toList();
    }
    List<String> measured = AotTraining.imageFlags(EXAMPLES);

    assertThat(dockerfiles).hasSizeGreaterThanOrEqualTo(5);
    assertThat(measured)
        .contains("-XX:+UseCompactObjectHeaders")
        .noneMatch(f -> f.startsWith("-Xshare"));
    for (Path dockerfile : dockerfiles) {
      String text = Files.readString(dockerfile);
      assertThat(text).as(dockerfile.toString()).contains("FROM eclipse-temurin:25-jre");
      assertThat(AotTraining.jdkJavaOptions(text)).as(dockerfile.toString()).isEqualTo(measured);
    }
  }

  @Test
  void everyImageWithACache_trainsItWithTheScriptForItsJarAndRunsWithIt() throws Exception {
    Pattern copy = Pattern.compile("(?m)^COPY target/\\S+ (\\S+)$");
    Pattern train = Pattern.compile("(?m)^    sh /tmp/train\\.sh java (\\S+) (\\S+)$");
    Pattern entry =
        Pattern.compile(
            "ENTRYPOINT \\[\"java\", \"-XX:AOTCache=([^\"]+)\",[\\s\\\\]+\"-jar\","
                + " \"([^\"]+)\"\\]");
    int withCache = 0;
    for (String example : List.of("fpga", "nic", "infiniband", "generic")) {
      String text = Files.readString(EXAMPLES.resolve(example).resolve("Dockerfile"));
      Matcher c = copy.matcher(text);
      Matcher t = train.matcher(text);
      Matcher e = entry.matcher(text);
      assertThat(c.find() && t.find() && e.find()).as(example + "'s Dockerfile").isTrue();
      // The cache serves the jar it was trained on, at the same path; the plugin maps that cache.
      assertThat(t.group(1)).as(example).isEqualTo(c.group(1)).isEqualTo(e.group(2));
      assertThat(t.group(2)).as(example).isEqualTo(e.group(1));
      assertThat(text).as(example).contains("source=train.sh,target=/tmp/train.sh");
      withCache++;
    }
    assertThat(withCache).isEqualTo(4);
    assertThat(EXAMPLES.resolve(AotTraining.SCRIPT)).isRegularFile();
  }

  @Test
  void parseSets_jdk25StartsFromTheJdk25ImageAndAsksForItsCache() {
    JvmFlags.FlagSet image25 =
        new JvmFlags.FlagSet(
            "JDK 25 image",
            List.of("-XX:+UseSerialGC", "-XX:+UseCompactObjectHeaders"),
            "/jdk25/bin/java",
            Map.of("METRICS_ADDRESS", "127.0.0.1:0"));
    List<GoFlags.Config> sets =
        GoFlags.parseSets(
            List.of(
                "cached | @jdk25 -XX:TieredStopAtLevel=1",
                "uncached | @jdk25 @no-cache !-XX:+UseCompactObjectHeaders",
                "seventeen | -Xmn2m"),
            IMAGE,
            image25);

    assertThat(sets).extracting(GoFlags.Config::aot).containsExactly(true, false, false);
    assertThat(sets.get(0).flags().java()).isEqualTo("/jdk25/bin/java");
    assertThat(sets.get(0).flags().flags())
        .containsExactly(
            "-XX:+UseSerialGC", "-XX:+UseCompactObjectHeaders", "-XX:TieredStopAtLevel=1");
    assertThat(sets.get(0).flags().env()).containsKey("METRICS_ADDRESS");
    assertThat(sets.get(1).flags().flags()).containsExactly("-XX:+UseSerialGC");
    assertThat(sets.get(2).flags().java()).isNull();
    assertThat(sets.get(2).flags().flags())
        .startsWith("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    assertThatThrownBy(() -> GoFlags.parseSets(List.of("x | @jdk25"), IMAGE, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(GoFlags.JDK25_PROPERTY);
    assertThatThrownBy(() -> GoFlags.parseSets(List.of("x | -Xmn2m @jdk25"), IMAGE, image25))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("@jdk25 first");
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
              Files.readAllLines(f),
              JvmFlags.withAppCds("image", Path.of("app.jsa")),
              GoFlags.image25(AotTraining.imageFlags(EXAMPLES), JvmFlags.RECOMMENDED));
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
