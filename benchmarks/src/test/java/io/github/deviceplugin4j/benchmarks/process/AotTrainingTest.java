package io.github.deviceplugin4j.benchmarks.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The images' training script, examples/aot/train.sh, run as the harness runs it (and as the
 * Dockerfiles do, with the FPGA example Dockerfile's flags in {@code JDK_JAVA_OPTIONS}) on the FPGA
 * example's jar with JDK 25: it writes an AOT cache, and the plugin started from that jar with
 * those flags maps the SDK's classes from it. {@code -XX:AOTMode=on} makes a cache the JVM refuses
 * (other flags, another jar) an error at start instead of a silent start without it. Skipped
 * without a JDK 25 ({@value GoFlags#JDK25_PROPERTY}).
 */
// The training takes a minute or more on a busy machine.
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@ExtendWith(ScenarioTests.NoProcessLeftBehind.class)
class AotTrainingTest {

  @TempDir static Path root;

  @Test
  void trainingScript_writesAnAotCacheThatThePluginMapsTheSdksClassesFrom() throws Exception {
    assumeTrue(Files.isExecutable(GoFlags.jdk25()), "no JDK 25 at " + GoFlags.jdk25());
    BenchContext ctx = ScenarioTests.context(root, BenchContext.Client.JVM);
    FpgaNode node = new FpgaNode(ctx.newDir("n"), ctx.exampleJar("fpga"));
    JvmFlags.FlagSet image25 = GoFlags.image25(ctx, JvmFlags.RECOMMENDED);

    JvmFlags.FlagSet trained = AotTraining.train(ctx, node.jar(), image25, "JDK 25 image");

    List<String> flags = trained.flags();
    assertThat(flags.subList(0, flags.size() - 1)).isEqualTo(image25.flags());
    assertThat(flags.get(flags.size() - 1)).startsWith("-XX:AOTCache=");
    Path cache = Path.of(flags.get(flags.size() - 1).substring("-XX:AOTCache=".length()));
    assertThat(Files.size(cache)).isPositive();

    List<String> checked = new ArrayList<>(flags);
    checked.add("-XX:AOTMode=on");
    checked.add("-Xlog:class+load");
    Path run = ctx.newDir("r");
    Path log = run.resolve("plugin.log");
    try (JavaProcess p =
        node.start(trained.withFlags("checked", checked), ctx.newDir("p"), null, run)) {
      long end = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      // Serving its socket: past the start, the SDK's classes loaded.
      while (!Files.readString(log).contains("Serving ") && System.nanoTime() < end) {
        if (p.waitFor(Duration.ofMillis(50))) {
          break;
        }
      }
      String out = Files.readString(log);
      assertThat(out).as(p.logTail(20)).contains("Serving ");
      assertThat(out)
          .containsPattern(
              "io\\.github\\.deviceplugin4j\\.core\\.DevicePluginHost source: shared objects file")
          .containsPattern(
              "io\\.github\\.deviceplugin4j\\.core\\.internal\\.registration\\.\\S+"
                  + " source: shared objects file");
    }
  }
}
