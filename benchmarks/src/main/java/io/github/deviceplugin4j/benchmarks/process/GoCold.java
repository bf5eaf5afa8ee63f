package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code cold} scenario (with {@code --client=go}): only the cold Allocate table of {@link
 * GoFlags} (with its start → registered columns), for the Go stub, the FPGA example under the JDK
 * 17 images' flags and, when a JDK 25 is installed, the JDK 25 image with its AOT cache (and, with
 * {@value #ALL_PROPERTY}{@code =true}, every flag set of {@code flags}). It takes a few minutes
 * instead of the quarter of an hour of {@code flags}, so a change to the first call's path can be
 * measured on its own. With {@value GoFlags#SETS_PROPERTY}, the file's candidate flag sets are
 * measured too, after the Go stub and the image's flags.
 */
public final class GoCold implements Scenario {

  /** System property: {@code true} runs every flag set of {@code flags}, not only the image's. */
  public static final String ALL_PROPERTY = "bench.cold.all";

  /** Creates the scenario. */
  public GoCold() {}

  @Override
  public String name() {
    return "cold";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    if (ctx.client() != BenchContext.Client.GO) {
      report.skipped(name(), "runs with --client=go only (the Go fake kubelet drives it)");
      return;
    }
    Optional<GoPrograms> found = GoPrograms.build(ctx);
    if (found.isEmpty()) {
      report.skipped(name(), GoPrograms.missingReason());
      return;
    }
    FpgaNode node = new FpgaNode(ctx.newDir("n"), ctx.exampleJar("fpga"));
    JvmFlags.FlagSet image = AppCds.image(ctx, node.jar()).flags();
    List<GoFlags.Config> configs = new ArrayList<>();
    for (GoFlags.Config c : GoFlags.configs(image)) {
      if (Boolean.getBoolean(ALL_PROPERTY) || c.go() || c.name().equals("image flags")) {
        configs.add(c);
      }
    }
    JvmFlags.FlagSet image25 = GoFlags.image25(ctx, image);
    String setsFile = System.getProperty(GoFlags.SETS_PROPERTY);
    if (setsFile != null) {
      configs.addAll(GoFlags.parseSets(Files.readAllLines(Path.of(setsFile)), image, image25));
    } else if (image25 != null) {
      configs.add(new GoFlags.Config(GoFlags.AOT_ROW, image25, true));
    }
    GoFlags.trainAll(ctx, node.jar(), configs);
    GoFlags.cold(ctx, report, found.get(), node, configs);
  }
}
