package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Check;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Level;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Result;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.Verdict;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;

/** {@code fake-kubelet conform}: runs the conformance suite against a plugin process. */
@CommandLine.Command(
    name = "conform",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    customSynopsis = {
      "fake-kubelet conform [OPTIONS] -- COMMAND [ARG...]",
      "fake-kubelet conform --dra [OPTIONS] -- COMMAND [ARG...]"
    },
    header = "Start a plugin and run the conformance suite against it.",
    description = {
      "Starts a fake kubelet on DIR (default: a new directory under /tmp), starts COMMAND in a"
          + " process group of its own with DEVICE_PLUGIN_DIR=DIR (and PLUGINS_REGISTRY_DIR with"
          + " --registry, which turns on the plugin watcher), replacing {dir} and {registry} in"
          + " its arguments, and runs the checks below on every resource the plugin registers."
          + " Prints a report; writes JUnit XML with --junit-xml. At the end the plugin's whole"
          + " process group gets SIGTERM (SIGKILL 5 s later), so a wrapper script without exec"
          + " does not leave the plugin running.",
      "With --dra the fake watches the plugins registry (--registry-dir, default a new"
          + " directory; PLUGINS_REGISTRY_DIR and {registry} for the driver) for a DRA driver"
          + " (--driver: its expected name) and runs the dra-* checks instead; {dir} is a"
          + " directory the driver may put its DRA socket in, which a kubelet restart leaves"
          + " alone, and DEVICE_PLUGIN_DIR is the fake's device plugin directory, so a device"
          + " plugin started with --dra by mistake is named at once.",
      "With --dra and a Kubernetes API server provider on the class path (the"
          + " deviceplugin4j-dra-conform -cli jar has one: fabric8's mock API server), the"
          + " server is started first with the Node --node-name in it, and the driver gets"
          + " KUBECONFIG, KUBERNETES_MASTER (and KUBERNETES_AUTH_TRYKUBECONFIG=false,"
          + " KUBERNETES_AUTH_TRYSERVICEACCOUNT=false for fabric8) and NODE_NAME; {node} and"
          + " {kubeconfig} in its arguments are replaced. dra-slices-valid and"
          + " dra-unhealthy-tainted then read the ResourceSlices it publishes; without a provider"
          + " they are skipped.",
      ""
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:no check failed (warnings allowed)",
      "1:a check failed (a required one, or with --strict any), or the plugin command could not"
          + " start (the JUnit XML says so), or another runtime failure",
      "2:a usage error: unknown option or check, bad value, no COMMAND"
    })
final class ConformCommand implements Callable<Integer> {
  /**
   * How long {@code registers} waits by default: a JVM plugin on a busy 2-core machine was seen to
   * register 11.5 s after its process started; a plugin that registers does not wait for it.
   */
  static final int DEFAULT_REGISTER_TIMEOUT_SECONDS = 30;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @CommandLine.Option(
      names = "--dir",
      paramLabel = "DIR",
      description = "The device plugin directory (default: a new directory under /tmp).")
  Path dirOption;

  @CommandLine.Option(
      names = "--registry",
      paramLabel = "DIR",
      description = "Watch this plugins registry too (plugin watcher registration).")
  Path registryOption;

  @CommandLine.Option(
      names = "--resource",
      paramLabel = "NAME",
      description = "Check only this resource (default: every resource the plugin registers).")
  String resourceOption;

  @CommandLine.Option(
      names = "--junit-xml",
      paramLabel = "FILE",
      description = "Write the results as JUnit XML.")
  Path junitXml;

  @CommandLine.Option(
      names = "--register-timeout-seconds",
      paramLabel = "N",
      description = "How long to wait for the first registration (default: 30).")
  long registerTimeoutSeconds = DEFAULT_REGISTER_TIMEOUT_SECONDS;

  @CommandLine.Option(
      names = "--restart-timeout",
      paramLabel = "SECONDS",
      description =
          "How long re-registers-after-restart waits for the plugin to come back after a kubelet"
              + " restart (default: 60). Back within 5 s passes; later passes with a warning"
              + " giving the time (the kubelet accepts it); never within SECONDS fails.")
  long restartTimeoutSeconds = ConformanceSuite.DEFAULT_RESTART_TIMEOUT.toSeconds();

  @CommandLine.Option(
      names = "--checks",
      paramLabel = "ID",
      split = ",",
      description = "Run only these checks (ids below).")
  List<String> checks;

  @CommandLine.Option(
      names = "--strict",
      description = "A failed recommended check fails the run (it warns otherwise).")
  boolean strict;

  @CommandLine.Mixin KubeletVersionOption kubeletVersion = new KubeletVersionOption();

  @CommandLine.Option(
      names = "--time-scale",
      paramLabel = "N",
      description =
          "Multiply the checks' time limits (first list 1 s, prompt re-registration 5 s, exit"
              + " after SIGTERM 10 s, DRA health 2 s, DRA slices and taints 10 s) by N, 1 to 100 (default: 1): for a CI runner"
              + " so starved that a correct plugin misses them; a node's kubelet does not wait"
              + " longer.")
  long timeScale = 1;

  @CommandLine.Option(
      names = "--verbose",
      description = "Echo the plugin's output and print the kubelet's event log.")
  boolean verbose;

  @CommandLine.Option(names = "--dra", description = "Check a DRA driver (the dra-* checks).")
  boolean dra;

  @CommandLine.Option(
      names = "--registry-dir",
      paramLabel = "DIR",
      description = "With --dra: the plugins registry (default: a new directory).")
  Path registryDirOption;

  @CommandLine.Option(
      names = "--driver",
      paramLabel = "NAME",
      description = "With --dra: the driver name expected.")
  String driverOption;

  @CommandLine.Option(
      names = "--node-name",
      paramLabel = "NAME",
      description =
          "With --dra: the node the driver runs on, NODE_NAME and {node} for the driver (default:"
              + " conform-node).")
  String nodeName = "conform-node";

  @CommandLine.Option(
      names = "--make-unhealthy",
      paramLabel = "COMMAND",
      description =
          "With --dra: a shell command (sh -c, placeholders replaced, the driver's environment)"
              + " run once the slices are published that makes one device fail, e.g. writes a"
              + " simulated error counter: dra-unhealthy-tainted then waits for a taint under the"
              + " driver's name.")
  String makeUnhealthy;

  @CommandLine.Option(
      names = "--make-healthy",
      paramLabel = "COMMAND",
      description =
          "With --dra: a shell command run after --make-unhealthy's taint appeared that repairs"
              + " the device: dra-unhealthy-tainted then waits for the taint to go.")
  String makeHealthy;

  @CommandLine.Parameters(
      paramLabel = "COMMAND",
      arity = "0..*",
      description = "The plugin command and its arguments, after --.")
  List<String> pluginCommand = new ArrayList<>();

  private final PrintStream out;
  private String apiServer = ""; // for the report: the URL and what serves it, if any

  ConformCommand(PrintStream out) {
    this.out = out;
  }

  /** The help's footer: the checks and their levels. */
  static String[] footer() {
    List<String> lines = new ArrayList<>();
    lines.add("");
    lines.add(
        "Checks (required: the kubelet's contract; recommended: good practice it does not"
            + " enforce). A failed required check is FAIL; a failed recommended check is WARN, or"
            + " FAIL with --strict. With several resources each check runs on each.");
    for (Check c : Check.values()) {
      lines.add(String.format("  %-31s %s", c.id, c.level.id()));
      lines.add("      " + c.title);
    }
    return lines.toArray(String[]::new);
  }

  private CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  @Override
  public Integer call() throws IOException {
    if (pluginCommand.isEmpty()) {
      throw usage("conform needs the plugin command after --, e.g. conform -- ./my-plugin");
    }
    Set<Check> selected = EnumSet.allOf(Check.class);
    if (checks != null) {
      selected = EnumSet.noneOf(Check.class);
      for (String id : checks) {
        String trimmed = id.trim();
        Check c =
            Check.byId(trimmed)
                .orElseThrow(
                    () ->
                        usage(
                            "--checks: unknown check '"
                                + trimmed
                                + "'; checks: "
                                + java.util.Arrays.stream(Check.values())
                                    .map(x -> x.id)
                                    .collect(Collectors.joining(", "))));
        selected.add(c);
      }
    }
    if (timeScale < 1 || timeScale > 100) {
      throw usage("--time-scale: " + timeScale + " is not between 1 and 100");
    }
    if (restartTimeoutSeconds < 1) {
      throw usage("--restart-timeout: " + restartTimeoutSeconds + " is not a positive number");
    }
    if (registerTimeoutSeconds < 1) {
      throw usage(
          "--register-timeout-seconds: " + registerTimeoutSeconds + " is not a positive number");
    }
    Path tempRoot = null;
    Path dir;
    if (dirOption != null) {
      dir = dirOption.toAbsolutePath();
    } else {
      tempRoot = Files.createTempDirectory(Path.of("/tmp"), "fkc");
      dir = tempRoot.resolve("dp");
    }
    Path registryArg = registryDirOption != null ? registryDirOption : registryOption;
    Optional<Path> registry = Optional.ofNullable(registryArg).map(Path::toAbsolutePath);
    if (dra && registry.isEmpty()) {
      if (tempRoot == null) {
        tempRoot = Files.createTempDirectory(Path.of("/tmp"), "fkc");
      }
      registry = Optional.of(tempRoot.resolve("reg"));
    }
    Optional<Path> registryDir = registry;
    if (dra && nodeName.isBlank()) {
      throw usage("--node-name: the node name is empty");
    }
    DraApiServerSession api = DraApiServerSession.none(nodeName);
    if (dra) {
      if (tempRoot == null) {
        tempRoot = Files.createTempDirectory(Path.of("/tmp"), "fkc");
      }
      try {
        api = DraApiServerSession.start(nodeName, tempRoot.resolve("api"));
      } catch (Exception e) {
        deleteTree(tempRoot);
        spec.commandLine()
            .getErr()
            .println("fake-kubelet conform: cannot start the Kubernetes API server: " + e);
        return Main.FAILED;
      }
    }
    DraApiServerSession apiSession = api;
    apiServer = api.describe();
    java.util.function.UnaryOperator<String> placeholders =
        s ->
            apiSession.substitute(
                s.replace("{dir}", dir.toString())
                    .replace("{registry}", registryDir.map(Path::toString).orElse("")));
    List<String> command = new ArrayList<>();
    for (String s : pluginCommand) {
      command.add(placeholders.apply(s));
    }

    // Like the kubelet, tolerate a GetPreferredAllocation answer that does not fit the request:
    // preferred-allocation-valid reports it.
    Path kubeletDir = dir;
    if (dra) {
      // The driver's {dir} must survive a kubelet restart, which cleans the device plugin dir.
      if (tempRoot == null) {
        tempRoot = Files.createTempDirectory(Path.of("/tmp"), "fkc");
      }
      kubeletDir = tempRoot.resolve("dp");
    }
    Map<String, String> env = new LinkedHashMap<>();
    // With --dra a device plugin that reads DEVICE_PLUGIN_DIR finds the fake's kubelet.sock and
    // registers, so the suite names the mistake at once instead of waiting for a DRA driver.
    env.put("DEVICE_PLUGIN_DIR", kubeletDir.toString());
    registryDir.ifPresent(r -> env.put("PLUGINS_REGISTRY_DIR", r.toString()));
    if (dra) {
      env.putAll(api.environment()); // NODE_NAME, and KUBECONFIG etc. with an API server
    }
    FakeKubelet.Builder b =
        FakeKubelet.builder()
            .pluginDir(kubeletDir)
            .profile(kubeletVersion.profile)
            .strictPreferredAllocation(false);
    registryDir.ifPresent(b::registryDir);
    Instant started = Instant.now();
    List<Result> results;
    String eventLog;
    List<String> pluginOutput;
    List<String> checked;
    List<String> unchecked;
    String startFailure = null;
    try (FakeKubelet kubelet = b.start()) {
      PluginProcess plugin;
      try {
        plugin = PluginProcess.start(command, env, verbose ? out : null);
      } catch (PluginProcess.StartException e) {
        plugin = null;
        startFailure = e.getMessage();
      }
      if (plugin == null) {
        results = ConformanceSuite.notStarted(startFailure, dra);
        checked = List.of();
        unchecked = List.of();
        pluginOutput = List.of();
      } else {
        try {
          ConformanceSuite suite =
              new ConformanceSuite(
                  kubelet,
                  plugin,
                  Optional.ofNullable(dra ? driverOption : resourceOption),
                  Duration.ofSeconds(registerTimeoutSeconds),
                  selected,
                  strict,
                  (int) timeScale,
                  Duration.ofSeconds(restartTimeoutSeconds));
          suite.sliceChecks(
              new DraSliceChecks(
                  api,
                  Optional.ofNullable(makeUnhealthy).map(placeholders),
                  Optional.ofNullable(makeHealthy).map(placeholders),
                  env,
                  (int) timeScale));
          results = dra ? suite.runDra() : suite.run();
          checked = suite.resources();
          unchecked = dra ? List.of() : suite.uncheckedResources();
        } finally {
          plugin.close(); // SIGTERM to its process group, then SIGKILL after 5 s
        }
        pluginOutput = plugin.outputTail(40);
      }
      eventLog = kubelet.eventLog();
    } finally {
      api.close(); // after the driver stopped: it may delete its slices on the way out
      if (tempRoot != null) {
        deleteTree(tempRoot);
      }
    }
    Duration total = Duration.between(started, Instant.now());
    boolean failed = results.stream().anyMatch(r -> r.verdict() == Verdict.FAIL);
    if (startFailure != null) {
      // One clear line; the JUnit XML below says the same.
      spec.commandLine().getErr().println("fake-kubelet conform: " + startFailure);
    } else {
      printReport(
          command,
          dir,
          registryDir,
          checked,
          unchecked,
          results,
          total,
          failed,
          eventLog,
          pluginOutput);
    }
    if (junitXml != null) {
      Path xml = junitXml;
      if (xml.toAbsolutePath().getParent() != null) {
        Files.createDirectories(xml.toAbsolutePath().getParent());
      }
      Files.writeString(
          xml,
          JunitXml.write(
              String.join(",", checked), command, results, strict, total, eventLog, pluginOutput),
          StandardCharsets.UTF_8);
      out.println("JUnit XML: " + xml.toAbsolutePath());
    }
    return failed ? Main.FAILED : Main.OK;
  }

  private void printReport(
      List<String> command,
      Path dir,
      Optional<Path> registry,
      List<String> checked,
      List<String> unchecked,
      List<Result> results,
      Duration total,
      boolean failed,
      String eventLog,
      List<String> pluginOutput) {
    out.println(
        (dra ? "DRA driver conformance" : "Device plugin conformance")
            + " (deviceplugin4j fake kubelet)");
    out.println("  plugin command:   " + abbreviate(command));
    out.println("  plugin directory: " + dir);
    registry.ifPresent(r -> out.println("  registry:         " + r + " (plugin watcher)"));
    if (dra) {
      out.println(
          "  API server:       "
              + (apiServer.isEmpty()
                  ? "none: dra-slices-valid and dra-unhealthy-tainted are skipped"
                  : apiServer));
    }
    String label = dra ? "  driver:           " : "  resources:        ";
    out.println(
        label
            + (checked.isEmpty() ? "(none registered)" : String.join(", ", checked))
            + (dra || checked.isEmpty()
                ? ""
                : resourceOption != null
                    ? " (--resource)"
                    : checked.size() == 1
                        ? " (the one resource it registered)"
                        : " (every resource it registered, each checked)"));
    if (!unchecked.isEmpty()) {
      out.println(
          "  not checked:      "
              + String.join(", ", unchecked)
              + (resourceOption != null
                  ? " (registered too; --resource names one)"
                  : " (registered after the checks had run)"));
    }
    out.println(
        "  levels:           required checks fail the run; recommended checks "
            + (strict ? "too (--strict)" : "warn (fail with --strict)"));
    out.println();
    boolean several = checked.size() > 1;
    for (Level level : Level.values()) {
      out.println("  " + level.id() + ":");
      for (Result r : results) {
        if (r.check().level == level) {
          out.printf(
              "  %-4s  %-28s %6d ms  %s%n",
              r.verdict(),
              r.check().id,
              r.millis(),
              (several && !r.resource().isEmpty() ? "[" + r.resource() + "] " : "") + r.message());
        }
      }
    }
    long pass = count(results, Verdict.PASS);
    long fail = count(results, Verdict.FAIL);
    long warn = count(results, Verdict.WARN);
    long skip = count(results, Verdict.SKIP);
    out.println();
    out.printf(
        "Conformance %s: %d checks, %d passed, %d failed, %d %s, %d skipped, in %.1f s%n",
        failed ? "FAILED" : "PASSED",
        results.size(),
        pass,
        fail,
        warn,
        warn == 1 ? "warning" : "warnings",
        skip,
        total.toMillis() / 1000.0);
    if (failed && !pluginOutput.isEmpty()) {
      out.println();
      out.println("Last lines of the plugin's output:");
      pluginOutput.forEach(l -> out.println("  | " + l));
    }
    if (failed || verbose) {
      out.println();
      out.println(
          eventLog.lines().map(l -> "  " + l).collect(Collectors.joining(System.lineSeparator())));
    }
  }

  static long count(List<Result> results, Verdict verdict) {
    return results.stream().filter(r -> r.verdict() == verdict).count();
  }

  /** Long arguments (class paths) shortened so the report stays readable. */
  static String abbreviate(List<String> command) {
    List<String> parts = new ArrayList<>();
    for (String s : command) {
      parts.add(s.length() <= 100 ? s : s.substring(0, 60) + "...(" + s.length() + " chars)");
    }
    return String.join(" ", parts);
  }

  private static void deleteTree(Path root) {
    try (var walk = Files.walk(root)) {
      walk.sorted(java.util.Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  // best effort
                }
              });
    } catch (IOException e) {
      // best effort
    }
  }
}
