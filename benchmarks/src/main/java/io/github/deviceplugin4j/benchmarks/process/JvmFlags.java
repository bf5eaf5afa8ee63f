package io.github.deviceplugin4j.benchmarks.process;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JVM flag sets the process scenarios compare. {@link #RECOMMENDED} is exactly what the example
 * images' {@code ENTRYPOINT} passes (examples/{fpga,nic,infiniband}/Dockerfile), so the figures are
 * those of the shipped images:
 *
 * <ul>
 *   <li>{@code -XX:+UseSerialGC}: one collector working in the VM thread, no G1 region tables,
 *       remembered sets or concurrent threads; a plugin has a few MiB of live heap, so its pauses
 *       stay short.
 *   <li>{@code -Xss256k}: the plugin's threads (event loop, gRPC executor, watcher) have shallow
 *       stacks; 256 KiB instead of 1 MiB caps what each thread may touch.
 *   <li>{@code -XX:MaxRAM=256m}: the heap is sized as if the machine had 256 MiB (maximum heap 64
 *       MiB, initial 4 MiB) instead of from the node's memory; independent of the container's
 *       limit.
 *   <li>{@code -XX:TieredStopAtLevel=1}: C1 only: one compiler thread and no C2 arenas. On
 *       grpc-java's server C2 alone brings a hot Allocate path to the Go reference plugin's latency
 *       in the same memory, but takes twice as long over a fresh process's first calls and a
 *       re-registration, which are what a node sees (docs/performance.md, "The images' flags on
 *       grpc-java's server", and flag-sets/grpc-server.txt). C1 keeps the JDK's thresholds: with
 *       {@code -XX:CompileThresholdScaling=2} (a method compiled after about 400 calls, not 200)
 *       the images held 0.4-0.6 MiB less idle and re-registered 0.5-0.7 ms later; they took it
 *       while idle sat at the 64 MiB mark, and dropped it once the Register call no longer used
 *       gRPC's client and the archive shrank (61.4-61.9 MiB idle; in the history of
 *       docs/performance.md, git log).
 *   <li>{@code -XX:ReservedCodeCacheSize=16m}: the FPGA example's compiled code is 6-7 MiB after
 *       100,000 Allocates (NMT "Code"); 16 MiB bounds it (the default reserves 240 MiB).
 *   <li>{@code -XX:MaxMetaspaceSize=64m}: the FPGA example uses 11-13 MiB of metaspace (NMT); a
 *       bound that turns a class-loading leak into an error instead of growth.
 *   <li>{@code -XX:+ExitOnOutOfMemoryError}: a JVM whose heap ran out ends (status 3) instead of
 *       going on half-broken, so that Kubernetes restarts the pod (the SDK's own fatal-failure
 *       handling covers an {@code Error} escaping its threads; this covers the rest).
 *   <li>{@code -Xshare:auto}: the JDK default, written out in the images: use the JDK's CDS archive
 *       (and an application archive when one is given), fall back silently if it cannot be mapped.
 *   <li>{@code -Dio.netty.allocator.type=unpooled} and {@code
 *       -Dio.grpc.netty.useCustomAllocator=false}: Netty's pooled allocator keeps per-thread arenas
 *       and 4 MiB+ chunks that never shrink; a plugin's messages are small, and unpooled buffers
 *       kept a bare grpc-java server at 62-64 MiB after 10,000 calls instead of 72-75 MiB
 *       (shared/TOOLCHAIN.md). grpc-netty uses its own pooled allocator unless told not to.
 *   <li>{@code -Dio.netty.eventLoopThreads=1}: event loop groups created without a thread count
 *       (gRPC's shared ones) get one thread instead of two per core.
 *   <li>{@code -Dorg.slf4j.simpleLogger.showDateTime=true}: log format only (the images log through
 *       slf4j-simple); kept so the measured start is the image's.
 *   <li>{@code -XX:CompileCommand=CompileThresholdScaling,<package>.*::*,0.2} for the SDK, Netty,
 *       gRPC and protobuf (and {@code -XX:CompileCommand=quiet}, so the JVM does not print them):
 *       C1 compiles those packages' methods after a fifth of its usual calls (about 40 instead of
 *       200, times its load factor at start), and leaves the JDK's and a vendor's own at the usual
 *       thresholds. The socket warm-up's few hundred calls then compile the whole request path
 *       before the sockets are served, where at the JDK's thresholds a part stayed interpreted and
 *       ran in a node's first and far-apart calls: through the kubelet's client, the first {@code
 *       Allocate} after registration went from 1.85-2.12× to 0.91-1.54× the Go reference plugin's
 *       and calls 100 ms apart from 1.44-1.57× to 1.01-1.21×, for 1.3 MiB more idle. The same
 *       scaling for every method ({@code -XX:CompileThresholdScaling=0.2}) did as well for the
 *       far-apart calls, held 3.1 MiB more, and its first {@code Allocate} swung between 1.06× and
 *       2.56× (in the history of docs/performance.md, git log).
 * </ul>
 *
 * <p>An application class-data-sharing archive ({@link #withAppCds}) is the one lever left for
 * start-up time: {@code -XX:SharedArchiveFile} maps the classes a training run loaded, already
 * parsed and verified. The training run uses the same flags plus {@code
 * -XX:ArchiveClassesAtExit=<archive>} ({@link #training}) and a jar-only class path; the JVM writes
 * the archive as it exits: at the end of {@code main}, at {@code System.exit}, and on SIGTERM (JDK
 * 17, measured), never on SIGKILL.
 */
public final class JvmFlags {

  private JvmFlags() {}

  /**
   * A named list of JVM flags, the {@code java} launcher they are for, and environment entries the
   * process gets (glibc's {@code MALLOC_*} tunables are environment variables, not JVM flags).
   *
   * @param name how the report names it
   * @param flags the flags, in order
   * @param java the {@code java} launcher, or null for the harness's own JVM
   * @param env environment entries added to the process's, in order
   */
  public record FlagSet(String name, List<String> flags, String java, Map<String, String> env) {
    /**
     * A flag set.
     *
     * @param name how the report names it
     * @param flags the flags, in order
     * @param java the {@code java} launcher, or null for the harness's own JVM
     * @param env environment entries added to the process's, in order
     */
    public FlagSet {
      flags = List.copyOf(flags);
      env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
    }

    /**
     * A flag set with no environment entries.
     *
     * @param name how the report names it
     * @param flags the flags, in order
     * @param java the {@code java} launcher, or null for the harness's own JVM
     */
    public FlagSet(String name, List<String> flags, String java) {
      this(name, flags, java, Map.of());
    }

    /**
     * A flag set for the harness's own JVM, with no environment entries.
     *
     * @param name how the report names it
     * @param flags the flags, in order
     */
    public FlagSet(String name, List<String> flags) {
      this(name, flags, null, Map.of());
    }

    /**
     * Other flags for the same launcher and environment: a variant that differs from this set in
     * its JVM flags only.
     *
     * @param name how the report names the variant
     * @param flags its flags, in order
     * @return the variant
     */
    public FlagSet withFlags(String name, List<String> flags) {
      return new FlagSet(name, flags, java, env);
    }
  }

  /** The JVM's defaults: no flags. */
  public static final FlagSet DEFAULT = new FlagSet("default", List.of());

  /** What the example images pass; see the class description for each flag's reason. */
  public static final FlagSet RECOMMENDED =
      new FlagSet(
          "recommended",
          List.of(
              "-XX:+UseSerialGC",
              "-Xss256k",
              "-XX:MaxRAM=256m",
              "-XX:TieredStopAtLevel=1",
              "-XX:ReservedCodeCacheSize=16m",
              "-XX:MaxMetaspaceSize=64m",
              "-XX:+ExitOnOutOfMemoryError",
              "-Xshare:auto",
              "-Dio.netty.allocator.type=unpooled",
              "-Dio.grpc.netty.useCustomAllocator=false",
              "-Dio.netty.eventLoopThreads=1",
              "-Dorg.slf4j.simpleLogger.showDateTime=true",
              "-XX:CompileCommand=quiet",
              "-XX:CompileCommand=CompileThresholdScaling,io.github.deviceplugin4j.*::*,0.2",
              "-XX:CompileCommand=CompileThresholdScaling,io.netty.*::*,0.2",
              "-XX:CompileCommand=CompileThresholdScaling,io.grpc.*::*,0.2",
              "-XX:CompileCommand=CompileThresholdScaling,com.google.protobuf.*::*,0.2"));

  /**
   * The recommended flags with an application CDS archive.
   *
   * @param name how the report names the set
   * @param archive the archive a {@link #training} run wrote
   * @return the flag set
   */
  public static FlagSet withAppCds(String name, Path archive) {
    List<String> flags = new ArrayList<>(RECOMMENDED.flags());
    flags.add("-XX:SharedArchiveFile=" + archive);
    return new FlagSet(name, flags);
  }

  /**
   * The example image as it runs: the recommended flags, its archive, and its HTTP endpoint ({@code
   * /metrics}, {@code /healthz}, {@code /readyz}) on, as the images' {@code METRICS_ADDRESS=:9400}
   * has it (here on a free loopback port).
   *
   * @param name how the report names it
   * @param archive the image build's archive
   * @return the flag set
   */
  public static FlagSet image(String name, Path archive) {
    return new FlagSet(
        name, withAppCds(name, archive).flags(), null, Map.of("METRICS_ADDRESS", "127.0.0.1:0"));
  }

  /**
   * The recommended flags for a training run that writes an application CDS archive at exit.
   *
   * @param archive where the archive goes
   * @return the flag set
   */
  public static FlagSet training(Path archive) {
    List<String> flags = new ArrayList<>(RECOMMENDED.flags());
    flags.add("-XX:ArchiveClassesAtExit=" + archive);
    return new FlagSet("training", flags);
  }
}
