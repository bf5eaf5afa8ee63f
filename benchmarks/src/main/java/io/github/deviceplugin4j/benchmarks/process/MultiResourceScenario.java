package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BenchContext;
import io.github.deviceplugin4j.benchmarks.Fmt;
import io.github.deviceplugin4j.benchmarks.Report;
import io.github.deviceplugin4j.benchmarks.Scenario;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;

/**
 * Many resources in one plugin process: {@link MultiResourceMain} hosting 1 and {@link
 * io.github.deviceplugin4j.benchmarks.Sizes#resources()} resources of 8 devices each in one {@code
 * DevicePluginHost}, started with the recommended flags against the harness's fake kubelet (legacy
 * mode): process start → first resource registered → all registered, then idle RSS and the
 * process's thread count.
 *
 * <p>The process's class path is the shaded benchmarks jar when this class was loaded from it, else
 * the harness's own class path ({@code target/classes} and the dependencies, as under {@code mvn
 * verify}).
 */
public final class MultiResourceScenario implements Scenario {

  /** Title of the table. */
  public static final String TITLE = "Many resources in one plugin process";

  /** Devices per resource. */
  static final int DEVICES = 8;

  /** The second reading, after registration: two of the SDK's 5-second safety checks later. */
  static final Duration STEADY = Duration.ofSeconds(12);

  /** Creates the scenario. */
  public MultiResourceScenario() {}

  @Override
  public String name() {
    return "resources";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    List<String> classPath = classPath();
    List<List<String>> rows =
        report.table(
            TITLE,
            "MultiResourceMain (BenchBackend resources bench.example.com/rN, "
                + DEVICES
                + " devices each, in one DevicePluginHost) started as a process with the"
                + " recommended flags, legacy registration with the harness's fake kubelet; times"
                + " from right before the process starts to the kubelet's Register events;"
                + " "
                + Idle.DESCRIPTION
                + " after all registered; then again "
                + STEADY.toSeconds()
                + " s after all registered, past two of the SDK's 5-second safety checks (each"
                + " submits one task per resource to the host's worker pool). Class path: "
                + (classPath.size() == 1 && classPath.get(0).endsWith(".jar")
                    ? "the shaded benchmarks jar"
                    : "target/classes and the dependency jars (no shaded jar)")
                + ".",
            "resources",
            "→ first registered (ms)",
            "→ all registered (ms)",
            "RSS idle (MiB)",
            "threads idle",
            "RSS at +" + STEADY.toSeconds() + " s (MiB)",
            "HWM at +" + STEADY.toSeconds() + " s (MiB)",
            "threads at +" + STEADY.toSeconds() + " s");
    List<Integer> counts = new ArrayList<>(List.of(1));
    if (ctx.sizes().resources() > 1) {
      counts.add(ctx.sizes().resources());
    }
    // An unmeasured start first: the first process of a run also pays for cold page caches.
    measure(ctx, classPath, 1, true);
    for (int count : counts) {
      rows.add(measure(ctx, classPath, count, false));
    }
  }

  private static List<String> measure(
      BenchContext ctx, List<String> classPath, int count, boolean warmUp) throws Exception {
    Path dir = ctx.newDir("r");
    KubeletClock clock = new KubeletClock();
    List<String> args = new ArrayList<>();
    args.add("-cp");
    args.add(String.join(java.io.File.pathSeparator, classPath));
    args.add(MultiResourceMain.class.getName());
    args.add(Integer.toString(count));
    args.add(Integer.toString(DEVICES));
    try (FakeKubelet kubelet =
            FakeKubelet.builder().pluginDir(dir.resolve("p")).eventListener(clock).start();
        JavaProcess p =
            JavaProcess.start(
                JvmFlags.RECOMMENDED,
                args,
                Map.of(
                    "DEVICE_PLUGIN_DIR",
                    kubelet.pluginDir().toString(),
                    "PLUGINS_REGISTRY_DIR",
                    dir.resolve("no-registry").toString()),
                dir.resolve("plugin.log"))) {
      long first = clock.awaitRegistrations(1, p, FpgaRun.TIMEOUT) - p.startNanos();
      long all = clock.awaitRegistrations(count, p, FpgaRun.TIMEOUT) - p.startNanos();
      if (warmUp) {
        p.stop();
        return List.of();
      }
      Idle idle = Idle.await(p);
      List<String> registered = kubelet.resources();
      if (registered.size() != count) {
        throw new IllegalStateException(
            "the kubelet knows " + registered.size() + " resources, expected " + count);
      }
      long steadyAt = p.startNanos() + all + STEADY.toNanos();
      for (long left = steadyAt - System.nanoTime();
          left > 0;
          left = steadyAt - System.nanoTime()) {
        if (p.waitFor(Duration.ofNanos(left))) {
          p.checkAlive("read its memory " + STEADY.toSeconds() + " s after registration");
        }
      }
      ProcStatus steady = p.status();
      p.stop();
      return List.of(
          Integer.toString(count),
          Fmt.ms(first),
          Fmt.ms(all),
          Fmt.mib(idle.status().rssBytes()),
          Integer.toString(idle.status().threads()),
          Fmt.mib(steady.rssBytes()),
          Fmt.mib(steady.hwmBytes()),
          Integer.toString(steady.threads()));
    }
  }

  /**
   * The class path of the {@link MultiResourceMain} process.
   *
   * @return one shaded jar, or the harness's class path entries
   */
  static List<String> classPath() {
    CodeSource source = MultiResourceScenario.class.getProtectionDomain().getCodeSource();
    if (source != null) {
      try {
        Path location = Path.of(source.getLocation().toURI());
        if (Files.isRegularFile(location) && isShaded(location)) {
          return List.of(location.toString());
        }
      } catch (URISyntaxException | IllegalArgumentException e) {
        // not a file location: use the class path
      }
    }
    String cp = System.getProperty("java.class.path", "");
    if (cp.isEmpty()) {
      throw new IllegalStateException(
          "cannot tell the class path for MultiResourceMain: build the shaded jar (./mvnw -B"
              + " package -pl benchmarks) and run java -jar"
              + " benchmarks/target/deviceplugin4j-benchmarks.jar");
    }
    return List.of(cp.split(java.io.File.pathSeparator));
  }

  /** Whether a jar carries the SDK and gRPC too (the shaded jar), not only this module. */
  private static boolean isShaded(Path jar) {
    try (JarFile f = new JarFile(jar.toFile())) {
      return f.getEntry("io/github/deviceplugin4j/core/DevicePluginHost.class") != null
          && f.getEntry("io/grpc/netty/NettyServerBuilder.class") != null;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
