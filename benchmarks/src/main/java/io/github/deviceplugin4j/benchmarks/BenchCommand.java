package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.examples.common.ExampleVersion;
import io.github.deviceplugin4j.examples.common.PluginCli;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The benchmark command's command line ({@link Bench#main}); {@code --help} lists it. */
@Command(
    name = "deviceplugin4j-benchmarks",
    mixinStandardHelpOptions = true,
    versionProvider = ExampleVersion.class,
    sortOptions = false,
    description = {
      "Runs the end-to-end scenarios over real Unix sockets and prints their tables and the"
          + " targets as Markdown."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:the scenarios ran; the tables and targets are printed",
      "1:a scenario could not measure (one line says why)",
      "2:usage error: an unknown flag or scenario (one line names it)"
    })
public final class BenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--quick", description = "Tiny sizes: a check that everything runs, no figures.")
  boolean quick;

  @Option(
      names = "--only",
      paramLabel = "SCENARIO",
      split = ",",
      description = "Run only these scenarios: ${COMPLETION-CANDIDATES}. Default: all.",
      completionCandidates = ScenarioNames.class)
  List<String> only = new ArrayList<>();

  @Option(
      names = "--out",
      paramLabel = "FILE",
      description = "Also write the report to this Markdown file.")
  Path out;

  @Option(
      names = "--client",
      paramLabel = "jvm|go",
      defaultValue = "jvm",
      description = {
        "Who calls the plugins in the allocate, observer and restart scenarios: jvm (grpc-java"
            + " in this JVM) or go (grpc-go, like the kubelet; needs Go). Default: jvm."
      })
  BenchContext.Client client;

  @Option(
      names = "--examples",
      paramLabel = "DIR",
      description = "The repository's examples directory. Default: ./examples or ../examples.")
  Path examples;

  /** The scenario names, for {@code --help}. */
  static final class ScenarioNames extends ArrayList<String> {
    private static final long serialVersionUID = 1L;

    ScenarioNames() {
      super(Bench.scenarios().stream().map(Scenario::name).toList());
    }
  }

  /** Creates the command; picocli sets its options. */
  public BenchCommand() {}

  /**
   * The scenarios to run, checked.
   *
   * @return their names; empty for all
   * @throws IllegalArgumentException naming a scenario that does not exist
   */
  Set<String> scenarios() {
    List<String> known = new ScenarioNames();
    for (String name : only) {
      if (!known.contains(name)) {
        throw new IllegalArgumentException(
            "--only: no scenario named '"
                + name
                + "'; the scenarios are "
                + String.join(", ", known));
      }
    }
    return new LinkedHashSet<>(only);
  }

  /**
   * Runs the scenarios and prints the report.
   *
   * @return 0
   * @throws Exception when a scenario cannot measure
   */
  @Override
  public Integer call() throws Exception {
    Set<String> names = PluginCli.settings(spec, this::scenarios);
    // The plugins' INFO lines (registered, serving) would bury the tables; warnings still show.
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    Report report =
        Bench.run(
            quick ? Sizes.quick() : Sizes.full(),
            names,
            examples == null ? Bench.findExamples() : examples,
            client,
            System.out);
    if (out != null) {
      Files.writeString(out, Bench.render(report), StandardCharsets.UTF_8);
      System.out.println("written to " + out.toAbsolutePath());
    }
    return PluginCli.OK;
  }
}
