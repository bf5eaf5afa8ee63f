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
import java.util.stream.Collectors;

/** {@code fake-kubelet conform}: runs the conformance suite against a plugin process. */
final class ConformCommand {
  /**
   * How long {@code registers} waits by default: a JVM plugin on a busy 2-core machine was seen to
   * register 11.5 s after its process started; a plugin that registers does not wait for it.
   */
  static final int DEFAULT_REGISTER_TIMEOUT_SECONDS = 30;

  static final String HELP =
      """
      fake-kubelet conform [--dir DIR] [--registry DIR] [--resource NAME] [--junit-xml FILE]
                           [--register-timeout-seconds N] [--checks ID,...] [--strict]
                           [--kubelet-version V] [--time-scale N] [--verbose]
                           -- COMMAND [ARG...]
      fake-kubelet conform --dra [--registry-dir DIR] [--driver NAME] [--dir DIR]
                           [--junit-xml FILE] [--checks ID,...] [--strict]
                           [--kubelet-version V] [--time-scale N] -- COMMAND [ARG...]

        Starts a fake kubelet on DIR (default: a new directory under /tmp), starts COMMAND with
        DEVICE_PLUGIN_DIR=DIR (and PLUGINS_REGISTRY_DIR=DIR of --registry, which turns on the
        plugin watcher), replacing {dir} and {registry} in its arguments, and runs the checks
        (required: the kubelet's contract; recommended: good practice it does not enforce):
      %s
        --register-timeout-seconds (default 30) bounds the wait for the first registration.
        --time-scale N (default 1) multiplies the checks' time limits (first list 1 s,
        re-registration 5 s, exit after SIGTERM 10 s, DRA health 2 s): for a CI runner so
        starved that a correct plugin misses them; a node's kubelet does not wait longer.
        A failed required check is FAIL; a failed recommended check is WARN, or FAIL with
        --strict. Prints a report; writes JUnit XML with --junit-xml. Exit code: 0 when no
        check failed (warnings allowed), 1 when one failed, 2 on a usage error. --verbose
        echoes the plugin's output and prints the kubelet's event log. The process gets
        SIGTERM at the end: start the plugin with exec in a wrapper script so the signal
        reaches it.

        --kubelet-version (1.26 to 1.37, or latest, the default) models that kubelet where
        versions differ: its start-up cleanup of DIR, its stream-end bookkeeping, and for DRA
        which supported_versions it knows (1.32/1.33 fall back to v1alpha3.Node, 1.34+ refuse).

        With --dra the fake watches the plugins registry (--registry-dir, default a new
        directory; PLUGINS_REGISTRY_DIR and {registry} for the driver) for a DRA driver
        (--driver: its expected name) and runs the dra-* checks instead; {dir} is a directory
        the driver may put its DRA socket in.
      """;

  static String checkList() {
    StringBuilder b = new StringBuilder();
    for (Check c : Check.values()) {
      b.append(String.format("    %-28s %-11s %s%n", c.id, c.level.id(), c.title));
    }
    return b.toString();
  }

  private final PrintStream out;

  ConformCommand(PrintStream out) {
    this.out = out;
  }

  int run(List<String> argv) throws IOException {
    Args a =
        Args.parse(
            argv,
            Set.of(
                "--dir",
                "--registry",
                "--resource",
                "--junit-xml",
                "--register-timeout-seconds",
                "--checks",
                "--registry-dir",
                "--driver",
                "--kubelet-version",
                "--time-scale"),
            Set.of("--verbose", "--strict", "--dra"));
    boolean dra = a.flag("--dra");
    if (a.command.isEmpty()) {
      throw new Args.UsageException("conform needs the plugin command after --");
    }
    Set<Check> selected = EnumSet.allOf(Check.class);
    if (a.get("--checks") != null) {
      selected = EnumSet.noneOf(Check.class);
      for (String id : a.get("--checks").split(",")) {
        Check c =
            Check.byId(id.trim())
                .orElseThrow(
                    () ->
                        new Args.UsageException(
                            "unknown check " + id + "; checks:\n" + checkList()));
        selected.add(c);
      }
    }
    boolean verbose = a.flag("--verbose");
    boolean strict = a.flag("--strict");
    long timeScale = a.number("--time-scale", 1);
    if (timeScale < 1 || timeScale > 100) {
      throw new Args.UsageException("--time-scale: " + timeScale + " is not between 1 and 100");
    }
    Path tempRoot = null;
    Path dir;
    if (a.get("--dir") != null) {
      dir = Path.of(a.get("--dir")).toAbsolutePath();
    } else {
      tempRoot = Files.createTempDirectory(Path.of("/tmp"), "fkc");
      dir = tempRoot.resolve("dp");
    }
    String registryArg =
        a.get("--registry-dir") != null ? a.get("--registry-dir") : a.get("--registry");
    Optional<Path> registry =
        Optional.ofNullable(registryArg).map(p -> Path.of(p).toAbsolutePath());
    if (dra && registry.isEmpty()) {
      if (tempRoot == null) {
        tempRoot = Files.createTempDirectory(Path.of("/tmp"), "fkc");
      }
      registry = Optional.of(tempRoot.resolve("reg"));
    }
    Optional<Path> registryDir = registry;
    List<String> command = new ArrayList<>();
    for (String s : a.command) {
      command.add(
          s.replace("{dir}", dir.toString())
              .replace("{registry}", registryDir.map(Path::toString).orElse("")));
    }
    Map<String, String> env = new LinkedHashMap<>();
    env.put("DEVICE_PLUGIN_DIR", dir.toString());
    registryDir.ifPresent(r -> env.put("PLUGINS_REGISTRY_DIR", r.toString()));

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
    FakeKubelet.Builder b =
        FakeKubelet.builder()
            .pluginDir(kubeletDir)
            .profile(Args.kubeletProfile(a))
            .strictPreferredAllocation(false);
    registryDir.ifPresent(b::registryDir);
    Instant started = Instant.now();
    List<Result> results;
    String eventLog;
    List<String> pluginOutput;
    String resource;
    try (FakeKubelet kubelet = b.start()) {
      PluginProcess plugin = PluginProcess.start(command, env, verbose ? out : null);
      try {
        ConformanceSuite suite =
            new ConformanceSuite(
                kubelet,
                plugin,
                Optional.ofNullable(a.get(dra ? "--driver" : "--resource")),
                Duration.ofSeconds(
                    a.number("--register-timeout-seconds", DEFAULT_REGISTER_TIMEOUT_SECONDS)),
                selected,
                strict,
                (int) timeScale);
        results = dra ? suite.runDra() : suite.run();
        resource = suite.resource();
      } finally {
        plugin.close(); // SIGTERM, then SIGKILL after 5 s
      }
      eventLog = kubelet.eventLog();
      pluginOutput = plugin.outputTail(40);
    } finally {
      if (tempRoot != null) {
        deleteTree(tempRoot);
      }
    }
    Duration total = Duration.between(started, Instant.now());
    boolean failed = results.stream().anyMatch(r -> r.verdict() == Verdict.FAIL);
    printReport(
        command,
        dir,
        registryDir,
        resource,
        results,
        total,
        failed,
        strict,
        eventLog,
        pluginOutput,
        verbose);
    if (a.get("--junit-xml") != null) {
      Path xml = Path.of(a.get("--junit-xml"));
      if (xml.getParent() != null) {
        Files.createDirectories(xml.getParent());
      }
      Files.writeString(
          xml,
          JunitXml.write(resource, command, results, strict, total, eventLog, pluginOutput),
          StandardCharsets.UTF_8);
      out.println("JUnit XML: " + xml.toAbsolutePath());
    }
    return failed ? 1 : 0;
  }

  private void printReport(
      List<String> command,
      Path dir,
      Optional<Path> registry,
      String resource,
      List<Result> results,
      Duration total,
      boolean failed,
      boolean strict,
      String eventLog,
      List<String> pluginOutput,
      boolean verbose) {
    out.println("Device plugin conformance (deviceplugin4j fake kubelet)");
    out.println("  plugin command:   " + abbreviate(command));
    out.println("  plugin directory: " + dir);
    registry.ifPresent(r -> out.println("  registry:         " + r + " (plugin watcher)"));
    out.println("  resource:         " + (resource == null ? "(none registered)" : resource));
    out.println(
        "  levels:           required checks fail the run; recommended checks "
            + (strict ? "too (--strict)" : "warn (fail with --strict)"));
    out.println();
    for (Level level : Level.values()) {
      out.println("  " + level.id() + ":");
      for (Result r : results) {
        if (r.check().level == level) {
          out.printf(
              "  %-4s  %-28s %6d ms  %s%n", r.verdict(), r.check().id, r.millis(), r.message());
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
