package io.github.deviceplugin4j.benchmarks.jmh;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.benchmarks.BaselinePlugin;
import io.github.deviceplugin4j.benchmarks.BenchBackend;
import io.github.deviceplugin4j.benchmarks.DeclarativeBackend;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One Allocate with one device ID, over a real Unix socket, from the fake kubelet's own channel to
 * the plugin: the SDK ({@link BenchBackend}, an {@code Allocator}), the SDK answering with the
 * devices' merged default allocation (no {@code Allocator}), and the hand-written {@link
 * BaselinePlugin}. All three answer the same message: the device's {@code DeviceSpec} and {@code
 * BENCH_DEVICES=<id>}.
 *
 * <p>Run with {@code -prof gc}: both ends of the socket live in the benchmark's JVM, so {@code
 * gc.alloc.rate.norm} is the heap allocated per call by the client, the transport and the plugin
 * together. The client and transport are the same for every parameter, so the difference to {@code
 * baseline} is the SDK's own heap cost per Allocate. Times are noisy on a shared 2-core machine;
 * allocation figures are not.
 *
 * <pre>
 * java -cp benchmarks/target/deviceplugin4j-benchmarks.jar org.openjdk.jmh.Main \
 *     -prof gc AllocateBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
// The plugins' INFO lines (registered, stopped) would interleave with JMH's iteration lines.
@Fork(value = 1, jvmArgsAppend = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class AllocateBenchmark {

  /** The resource every plugin serves. */
  public static final String RESOURCE = "bench.example.com/dev";

  /** How many devices every plugin advertises. */
  public static final int DEVICES = 64;

  /** The device every call allocates. */
  public static final String DEVICE_ID = "dev-7";

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);

  /**
   * Which plugin answers: {@code sdk} (SDK with an {@code Allocator}), {@code sdk-declarative}
   * (SDK, no {@code Allocator}: the core answers with the devices' merged allocation) or {@code
   * baseline} (hand-written grpc-java, no SDK).
   */
  @Param({"sdk", "sdk-declarative", "baseline"})
  public String plugin;

  private Path dir;
  private FakeKubelet kubelet;
  private AutoCloseable server;
  private DevicePluginGrpc.DevicePluginBlockingStub stub;
  private AllocateRequest request;

  /**
   * Starts the fake kubelet and the plugin, waits until the kubelet holds the plugin's 64 healthy
   * devices.
   *
   * @throws Exception when the plugin does not start or register in time
   */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory(Path.of("/tmp"), "dp4jm");
    try {
      kubelet = FakeKubelet.builder().pluginDir(dir).start();
      server = startPlugin();
      kubelet.awaitRegistration(RESOURCE, READY_TIMEOUT);
      kubelet.awaitDevices(
          RESOURCE,
          l -> l.size() == DEVICES && l.stream().allMatch(d -> d.healthy()),
          READY_TIMEOUT);
      stub =
          DevicePluginGrpc.newBlockingStub(
              kubelet
                  .pluginChannel(RESOURCE)
                  .orElseThrow(
                      () ->
                          new IllegalStateException(
                              "the fake kubelet has no connection to the "
                                  + plugin
                                  + " plugin after it registered:\n"
                                  + kubelet.eventLog())));
      request =
          AllocateRequest.newBuilder()
              .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(DEVICE_ID))
              .build();
    } catch (Exception | Error e) {
      tearDown();
      throw e;
    }
  }

  private AutoCloseable startPlugin() throws IOException {
    switch (plugin) {
      case "sdk":
        return host(new BenchBackend(RESOURCE, DEVICES));
      case "sdk-declarative":
        return host(new DeclarativeBackend(RESOURCE, DEVICES));
      case "baseline":
        List<String> ids = new ArrayList<>(DEVICES);
        for (int i = 0; i < DEVICES; i++) {
          ids.add("dev-" + i);
        }
        BaselinePlugin baseline = new BaselinePlugin(RESOURCE, dir.resolve("baseline.sock"), ids);
        try {
          baseline.start().register(kubelet.kubeletSocket());
        } catch (IOException | RuntimeException e) {
          closeQuietly(baseline);
          throw e;
        }
        return baseline;
      default:
        throw new IllegalArgumentException(
            "unknown plugin \"" + plugin + "\": use sdk, sdk-declarative or baseline");
    }
  }

  private DevicePluginHost host(DeviceBackend backend) {
    return DevicePluginHost.builder()
        .backend(backend)
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .start();
  }

  /**
   * One Allocate of one device, answered by the plugin over its Unix socket.
   *
   * @return the plugin's answer (consumed by JMH)
   */
  @Benchmark
  public AllocateResponse allocate() {
    return stub.allocate(request);
  }

  /**
   * Stops the plugin and the fake kubelet (their Netty event loops included) and deletes the
   * directory.
   */
  @TearDown(Level.Trial)
  public void tearDown() {
    if (server != null) {
      closeQuietly(server);
      server = null;
    }
    if (kubelet != null) {
      kubelet.close();
      kubelet = null;
    }
    if (dir != null) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException ignored) {
        // a temporary directory: best effort
      }
      dir = null;
    }
    stub = null;
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      System.err.println("closing " + c + " failed: " + e);
    }
  }
}
