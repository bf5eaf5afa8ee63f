package io.github.deviceplugin4j.examples.common;

import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.PreStartHook;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import io.github.deviceplugin4j.core.ReadinessFile;
import io.github.deviceplugin4j.core.RegistrationMode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A training run for an application class-data-sharing (AppCDS) archive, for image builds, where
 * there is no kubelet and no hardware. Started from a plugin's own jar, it walks the code a plugin
 * runs at start and on every kubelet call, and exits. The example images list the classes it loaded
 * and write them into a static archive, which takes the place of the JDK's default one; the plugin
 * started with {@code -XX:SharedArchiveFile} maps those classes instead of loading and verifying
 * them (about half of its start-up time; docs/performance.md):
 *
 * <pre>
 * java &lt;the plugin's flags&gt; -XX:DumpLoadedClassList=/tmp/classes.lst \
 *     -cp /opt/deviceplugin4j/plugin.jar io.github.deviceplugin4j.examples.common.CdsTraining
 * java &lt;the plugin's flags&gt; -Xshare:dump -XX:SharedClassListFile=/tmp/classes.lst \
 *     -XX:SharedArchiveFile=/opt/deviceplugin4j/app.jsa -cp /opt/deviceplugin4j/plugin.jar
 * </pre>
 *
 * <p>{@code -XX:ArchiveClassesAtExit=<archive>} on the training run writes a dynamic archive in one
 * step instead; it maps the JDK's whole default archive under it, 1-1.5 MiB more resident memory
 * (measured with the FPGA example).
 *
 * <p>What it runs, in a temporary directory: a plugin with one simulated device in legacy mode (and
 * a readiness file, written when it registers, as the examples write one), called as the kubelet
 * calls it (options, ListAndWatch, GetPreferredAllocation, Allocate, PreStartContainer) over its
 * Unix socket, and its HTTP endpoint on a loopback port asked for {@code /metrics}, {@code
 * /healthz} and {@code /readyz}; its registration, with {@code kubelet.sock} linked to the plugin's
 * own socket (the Register call crosses the plugin's registration client and the gRPC server path
 * and is refused, as this plugin serves no Registration service); its registration with a kubelet
 * that accepts it and dials back, a kubelet restart (the plugin's socket deleted, {@code
 * kubelet.sock} served again) and its registration again; then the same plugin in plugin-watcher
 * mode, asked for its info and told it is registered. The kubelet's side of each step ({@link
 * CdsTrainingKubelet}) runs in a JVM of its own, started from the same class path: its gRPC
 * client's classes are not the plugin's and stay out of the archive. The archive applies only to
 * the same jar at the same path, with compatible flags: train with the image's own flags.
 */
public final class CdsTraining {

  static final String RESOURCE = "training.deviceplugin4j.io/device";
  static final long STEP_SECONDS = 10;

  /**
   * Pod admissions the kubelet side makes (GetPreferredAllocation, Allocate, PreStartContainer).
   */
  static final int ADMITS = 300;

  /**
   * Times the kubelet side serves {@code kubelet.sock} and accepts a Register: the first start and
   * 30 restarts, each a re-registration for the plugin.
   */
  static final int KUBELET_STARTS = 31;

  private CdsTraining() {}

  /**
   * Runs the training and exits with status 0, or 1 when a step failed.
   *
   * @param args none
   */
  public static void main(String[] args) {
    try {
      Path dir = Files.createTempDirectory(Path.of("/tmp"), "dp4jcds");
      try {
        run(dir);
      } finally {
        deleteTree(dir);
      }
      System.out.println("CDS training run complete");
    } catch (Exception | AssertionError e) {
      System.err.println("CDS training run failed: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  /**
   * Runs the training in a directory.
   *
   * @param dir an empty, short directory (Unix socket paths are limited to 107 bytes)
   * @throws Exception when a step fails
   */
  static void run(Path dir) throws Exception {
    legacy(dir.resolve("dp"));
    watcher(dir.resolve("dp2"), dir.resolve("reg"));
  }

  private static void legacy(Path pluginDir) throws Exception {
    Files.createDirectories(pluginDir);
    DevicePluginHost.Builder builder =
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new Backend())
            // The examples write a readiness file at registration, when the kubelet may call at
            // once: the classes that write it (some of the JDK's) come from the archive too.
            .listener(new ReadinessFile(pluginDir.resolve("ready"), List.of(RESOURCE)));
    PluginMetrics.enable(
        builder, Optional.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
    try (DevicePluginHost host = builder.start()) {
      Path socket = host.status(RESOURCE).socket();
      InetSocketAddress http = host.httpAddress().orElseThrow();
      kubelet(STEP_SECONDS * 6, "legacy", socket.toString(), String.valueOf(http.getPort()));
      Path kubeletSocket = pluginDir.resolve("kubelet.sock");
      Files.createSymbolicLink(kubeletSocket, socket);
      await(
          () -> host.status(RESOURCE).lastError().isPresent(),
          "a registration attempt on kubelet.sock");
      Files.delete(kubeletSocket);
      kubelet(STEP_SECONDS * (3 + KUBELET_STARTS), "register", pluginDir.toString());
      await(
          () -> host.status(RESOURCE).registrations() >= KUBELET_STARTS,
          "a registration, then one after each of " + (KUBELET_STARTS - 1) + " kubelet restarts");
    }
  }

  /**
   * Runs the kubelet's side of a step, {@link CdsTrainingKubelet}, in a JVM of its own: the classes
   * of its gRPC client and its HTTP requests are not the plugin's, and this JVM's class list is the
   * archive's.
   */
  private static void kubelet(String... args) throws IOException, InterruptedException {
    kubelet(STEP_SECONDS * 3, args);
  }

  private static void kubelet(long seconds, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(CdsTrainingKubelet.class.getName());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).inheritIO().start();
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("the kubelet side of the training did not end: " + command);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          "the kubelet side of the training failed (exit " + p.exitValue() + "): " + command);
    }
  }

  private static void watcher(Path pluginDir, Path registryDir) throws Exception {
    Files.createDirectories(pluginDir);
    Files.createDirectories(registryDir);
    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registryDir(registryDir)
            .registrationMode(RegistrationMode.PLUGIN_WATCHER)
            .backend(new Backend())
            .start()) {
      kubelet(STEP_SECONDS * 6, "watcher", host.status(RESOURCE).socket().toString());
      // The kubelet side has ended (its kubelet.sock is gone) when kubelet() returns: ask whether
      // the registration happened, not whether it still holds, which a busy machine's plugin may
      // already have seen end.
      await(() -> host.status(RESOURCE).registrations() >= 1, "the plugin-watcher registration");
    }
  }

  private static void await(java.util.function.BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      Thread.sleep(10);
    }
  }

  private static void deleteTree(Path root) throws IOException {
    List<Path> paths = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(root)) {
      walk.forEach(paths::add);
    }
    paths.sort(Comparator.reverseOrder());
    for (Path p : paths) {
      Files.deleteIfExists(p);
    }
  }

  /** One simulated device, with every backend capability, so that every core path runs. */
  static final class Backend implements DeviceBackend, Allocator, PreferredAllocator, PreStartHook {
    static final String ID = "training-0";

    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return List.of(Device.builder(ID).numaNode(0).deviceNode(DeviceNode.rw("/dev/null")).build());
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      return request.defaultAllocation().toBuilder().env("TRAINING_DEVICES", ID).build();
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) {
      return List.of(ID);
    }

    @Override
    public void preStart(List<Device> devices) {
      // nothing to prepare
    }
  }
}
