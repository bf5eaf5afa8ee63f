package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Large device lists: the backend publishes a changed list of n devices (one device's health flips)
 * until the fake kubelet has decoded and stored it; the size of the message on the wire.
 */
public final class ScaleScenario implements Scenario {

  @Override
  public String name() {
    return "scale";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    List<List<String>> rows =
        report.table(
            "ListAndWatch with large device lists",
            "The backend publishes a list of n devices (IDs dev-0 ..., health, one NUMA node each)"
                + " in which one device's health changed; measured from DeviceSink.publish until"
                + " the fake kubelet has decoded and stored the list (its own decoding included),"
                + " median and max of "
                + ctx.sizes().scaleRepeats()
                + " publications after 2 warm-up ones, each "
                + HealthScenario.PACE.toMillis()
                + " ms after the previous one (past the SDK's coalescing window); first list: from the host's start() to the"
                + " first list at the kubelet.",
            "devices",
            "bytes on the wire",
            "% of 4 MiB",
            "publish → kubelet p50 (ms)",
            "max (ms)",
            "first list (ms)");
    for (int n : ctx.sizes().deviceCounts()) {
      String resource = "bench.example.com/scale-" + n;
      ListWatcher watcher = new ListWatcher(resource);
      FakeKubelet kubelet =
          FakeKubelet.builder().pluginDir(ctx.newDir("scale")).eventListener(watcher).start();
      int repeats = ctx.sizes().scaleRepeats();
      long[] lat = new long[repeats];
      long first;
      try (Node node = Node.of(kubelet)) {
        BenchBackend backend = new BenchBackend(resource, n);
        long t0 = System.nanoTime();
        node.sdk(n, backend);
        first = watcher.lastListNanos() - t0;
        List<Device> healthy = BenchBackend.devices(n, Health.HEALTHY);
        List<Device> flipped = new ArrayList<>(healthy);
        flipped.set(n / 2, BenchBackend.device(n / 2, Health.UNHEALTHY));
        for (int i = -2; i < repeats; i++) {
          boolean toUnhealthy = (i & 1) == 0;
          // Paced past the SDK's coalescing window, so that each list is sent at once.
          long due = System.nanoTime() + HealthScenario.PACE.toNanos();
          while (System.nanoTime() - due < 0) {
            LockSupport.parkNanos(due - System.nanoTime());
          }
          long seen = watcher.lists();
          long start = System.nanoTime();
          backend.publish(toUnhealthy ? flipped : healthy);
          Waits.until(
              "the kubelet to have the list of " + n + " devices",
              Duration.ofSeconds(30),
              () ->
                  watcher.lists() > seen
                      && kubelet.devices(resource).get(n / 2).healthy() != toUnhealthy,
              kubelet::eventLog);
          if (i >= 0) {
            lat[i] = watcher.lastListNanos() - start;
          }
        }
        long bytes = kubelet.largestDeviceListBytes(resource);
        Stats s = Stats.of(lat);
        rows.add(
            List.of(
                Fmt.count(n),
                Fmt.count(bytes),
                String.format(java.util.Locale.ROOT, "%.1f %%", bytes * 100.0 / (4 << 20)),
                Fmt.ms(s.percentile(50)),
                Fmt.ms(s.max()),
                Fmt.ms(first)));
        if (n == 10_000) {
          report.target(
              "10,000 devices: snapshot → kubelet (p50)",
              "≤ 50 ms",
              Fmt.ms(s.percentile(50)) + " ms",
              s.percentile(50) <= 50_000_000L);
        }
      }
    }
  }
}
