package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A device's health flips in the backend (published through its sink) until the fake kubelet has
 * the new list: one flip at a time, each waited for before the next.
 */
public final class HealthScenario implements Scenario {

  static final String RESOURCE = "bench.example.com/health";
  static final int DEVICES = 64;

  @Override
  public String name() {
    return "health";
  }

  /** The SDK's coalescing window (DevicePluginHost): changes closer together are sent as one. */
  static final Duration COALESCE_WINDOW = Duration.ofMillis(20);

  /** Flips this far apart are each sent at once. */
  static final Duration PACE = COALESCE_WINDOW.plusMillis(5);

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    int flips = ctx.sizes().flips();
    ListWatcher watcher = new ListWatcher(RESOURCE);
    FakeKubelet kubelet =
        FakeKubelet.builder().pluginDir(ctx.newDir("health")).eventListener(watcher).start();
    Stats paced;
    Stats burst;
    try (Node node = Node.of(kubelet)) {
      BenchBackend backend = new BenchBackend(RESOURCE, DEVICES);
      node.sdk(DEVICES, backend);
      flip(kubelet, watcher, backend, Math.max(10, flips / 10), PACE);
      paced = flip(kubelet, watcher, backend, flips, PACE);
      burst = flip(kubelet, watcher, backend, Math.max(10, flips / 10), Duration.ZERO);
    }
    List<List<String>> rows =
        report.table(
            "Health change → kubelet",
            "One device of "
                + DEVICES
                + " flips between Healthy and Unhealthy in the backend (DeviceSink.publish);"
                + " measured until the fake kubelet has decoded and stored the new list; ms."
                + " paced: each flip "
                + PACE.toMillis()
                + " ms after the previous one. back to back: the next flip as soon as the kubelet"
                + " has the previous one; the SDK sends a change that follows the previous one"
                + " within "
                + COALESCE_WINDOW.toMillis()
                + " ms at the end of that window (a rate limit for flapping devices: the kubelet"
                + " writes its checkpoint file on every list).",
            "flips",
            "spacing",
            "p50",
            "p90",
            "p99",
            "max");
    for (Stats s : List.of(paced, burst)) {
      rows.add(
          List.of(
              Fmt.count(s.count()),
              s == paced ? "paced" : "back to back",
              Fmt.ms(s.percentile(50)),
              Fmt.ms(s.percentile(90)),
              Fmt.ms(s.percentile(99)),
              Fmt.ms(s.max())));
    }
    report.target(
        "Health change → kubelet p99 (paced)",
        "≤ 10 ms",
        Fmt.ms(paced.percentile(99)) + " ms",
        paced.percentile(99) <= 10_000_000L);
  }

  /**
   * Flips dev-0's health {@code n} times, each once the kubelet has the previous flip and at least
   * {@code pace} after the previous publication.
   */
  static Stats flip(
      FakeKubelet kubelet, ListWatcher watcher, BenchBackend backend, int n, Duration pace)
      throws Exception {
    List<Device> healthy = BenchBackend.devices(DEVICES, Health.HEALTHY);
    List<Device> flipped = new ArrayList<>(healthy);
    flipped.set(0, BenchBackend.device(0, Health.UNHEALTHY));
    long[] lat = new long[n];
    long previous = System.nanoTime();
    for (int i = 0; i < n; i++) {
      boolean toUnhealthy = kubelet.devices(RESOURCE).get(0).healthy();
      long due = previous + pace.toNanos();
      while (System.nanoTime() - due < 0) {
        LockSupport.parkNanos(due - System.nanoTime());
      }
      long seen = watcher.lists();
      long t0 = System.nanoTime();
      previous = t0;
      backend.publish(toUnhealthy ? flipped : healthy);
      Waits.until(
          "the kubelet to see dev-0 " + (toUnhealthy ? "unhealthy" : "healthy"),
          Duration.ofSeconds(10),
          () -> watcher.lists() > seen && kubelet.devices(RESOURCE).get(0).healthy() != toUnhealthy,
          kubelet::eventLog);
      lat[i] = watcher.lastListNanos() - t0;
    }
    return Stats.of(lat);
  }
}
