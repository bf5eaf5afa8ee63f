package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One start of the FPGA example's jar against a fresh fake kubelet (legacy or plugin-watcher
 * registration): the timestamps of registration, first device list and first Allocate, relative to
 * the moment right before the process was started. Closing stops the process (SIGTERM, then kill
 * after 10 s) and the kubelet.
 */
final class FpgaRun implements AutoCloseable {

  /** Generous: a cold JVM on a busy 2-core machine. */
  static final Duration TIMEOUT = Duration.ofSeconds(60);

  private final KubeletClock clock = new KubeletClock();
  private final FakeKubelet kubelet;
  private final JavaProcess process;

  /**
   * Starts the kubelet, then the plugin, in legacy mode.
   *
   * @param node the node and the jar
   * @param flags JVM flags
   * @param runDir an empty short directory for the plugin directory, log and readiness file
   */
  FpgaRun(FpgaNode node, JvmFlags.FlagSet flags, Path runDir) {
    this(node, flags, runDir, false);
  }

  /**
   * Starts the kubelet, then the plugin.
   *
   * @param node the node and the jar
   * @param flags JVM flags
   * @param runDir an empty short directory for the plugin directory, log and readiness file
   * @param watcher plugin-watcher registration (the kubelet watches {@code runDir/r}) instead of
   *     legacy
   */
  FpgaRun(FpgaNode node, JvmFlags.FlagSet flags, Path runDir, boolean watcher) {
    FakeKubelet.Builder b =
        FakeKubelet.builder().pluginDir(runDir.resolve("p")).eventListener(clock);
    Path registry = watcher ? runDir.resolve("r") : null;
    if (watcher) {
      b.registryDir(registry);
    }
    kubelet = b.start();
    try {
      process = node.start(flags, kubelet.pluginDir(), registry, runDir);
      clock.watchCpu(process.pid());
    } catch (RuntimeException e) {
      kubelet.close();
      throw e;
    }
  }

  FakeKubelet kubelet() {
    return kubelet;
  }

  JavaProcess process() {
    return process;
  }

  /** Process start → the kubelet accepted the registration, in nanoseconds. */
  long registered() throws InterruptedException {
    return clock.awaitRegistered(FpgaNode.RESOURCE, process, TIMEOUT) - process.startNanos();
  }

  /**
   * The plugin's CPU time (user + system, all its threads) when the kubelet accepted the
   * registration: the start-up work, independent of how busy the machine was.
   */
  long cpuAtRegistration() throws InterruptedException {
    registered();
    return clock.cpuAtRegistration(FpgaNode.RESOURCE);
  }

  /** Process start → the kubelet received the first device list, in nanoseconds. */
  long listed() throws InterruptedException {
    return clock.awaitListed(FpgaNode.RESOURCE, process, TIMEOUT) - process.startNanos();
  }

  /**
   * As soon as the devices are listed, allocates one device the way the kubelet admits a pod
   * ({@link FakeKubelet#allocate(String, int)}: preferred allocation if offered, Allocate,
   * PreStartContainer if required).
   *
   * @return process start → the allocation answered, in nanoseconds
   */
  long firstAllocate() throws InterruptedException {
    clock.awaitListed(FpgaNode.RESOURCE, process, TIMEOUT);
    kubelet.awaitDevices(
        FpgaNode.RESOURCE, l -> l.stream().anyMatch(DeviceState::healthy), TIMEOUT);
    kubelet.allocate(FpgaNode.RESOURCE, 1);
    return System.nanoTime() - process.startNanos();
  }

  /**
   * SIGTERM and wait (see {@link JavaProcess#stop()}).
   *
   * @return the exit status
   */
  int stop() throws InterruptedException {
    return process.stop();
  }

  @Override
  public void close() {
    try {
      process.close();
    } finally {
      kubelet.close();
    }
  }
}
