package io.github.deviceplugin4j.benchmarks.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.DeviceSpec;
import io.github.deviceplugin4j.benchmarks.BaselinePlugin;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AllocateBenchmarkTest {

  @ParameterizedTest
  @ValueSource(strings = {"sdk", "sdk-declarative", "baseline"})
  void allocate_answersTheDeviceSpecAndEnv_andTeardownLeavesNoThreads(String plugin)
      throws Exception {
    Set<Thread> before = nonDaemonThreads();
    AllocateBenchmark benchmark = new AllocateBenchmark();
    benchmark.plugin = plugin;
    benchmark.setUp();
    AllocateResponse first;
    AllocateResponse second;
    try {
      first = benchmark.allocate();
      second = benchmark.allocate();
    } finally {
      benchmark.tearDown();
    }

    String id = AllocateBenchmark.DEVICE_ID;
    AllocateResponse expected =
        AllocateResponse.newBuilder()
            .addContainerResponses(
                ContainerAllocateResponse.newBuilder()
                    .addDevices(
                        DeviceSpec.newBuilder()
                            .setContainerPath("/dev/" + id)
                            .setHostPath("/dev/" + id)
                            .setPermissions("rw"))
                    .putEnvs(BaselinePlugin.ENV, id))
            .build();
    assertThat(first).isEqualTo(expected);
    assertThat(second).isEqualTo(expected);

    // Every thread the setup started (Netty event loops, the SDK's pools) ends at teardown, or the
    // JMH fork would never exit.
    List<Thread> started =
        nonDaemonThreads().stream().filter(t -> !before.contains(t)).collect(Collectors.toList());
    for (Thread t : started) {
      t.join(5_000);
    }
    assertThat(started).filteredOn(Thread::isAlive).isEmpty();
  }

  private static Set<Thread> nonDaemonThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> !t.isDaemon() && t.isAlive())
        .collect(Collectors.toSet());
  }
}
