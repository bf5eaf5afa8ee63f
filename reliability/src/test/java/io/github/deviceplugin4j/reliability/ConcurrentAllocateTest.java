package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * 16 threads send raw Allocate calls (one connection, like the kubelet; not the fake kubelet's
 * allocation path, which serialises on purpose) while another thread keeps flipping device health.
 *
 * <p>The check that no device unhealthy at validation is ever allocated is made sound by tagging
 * every published list: each device carries {@code SNAP_<id>=<version>} in its allocation, and the
 * backend records, before publishing version {@code v}, which devices are unhealthy in {@code v}.
 * The core validates a request against one snapshot and hands the allocator that snapshot's device
 * objects; so the allocator (on the plugin side) and the client (on the response) can both look up
 * the version a device was validated in and check it was healthy there. The only acceptable error
 * is FAILED_PRECONDITION naming a requested device that was unhealthy in a published version.
 */
class ConcurrentAllocateTest {

  static final String RESOURCE = "example.com/flap";
  static final int DEVICES = 32;

  @TempDir Path tmp;

  @Test
  @Timeout(value = 15, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void allocateFromManyThreadsWhileHealthFlaps_noUnexpectedErrors_noUnhealthyAllocation()
      throws Exception {
    int threads = Sizes.allocateThreads();
    int calls = Sizes.allocateCallsPerThread();
    FlappingBackend backend = new FlappingBackend();
    Semaphore changed = new Semaphore(0);
    RecordingListener listener =
        new RecordingListener() {
          @Override
          public void onDevicesChanged(String resourceName, int total, int healthy) {
            changed.release();
          }
        };
    AtomicInteger ok = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    Queue<String> unexpected = new ConcurrentLinkedQueue<>();
    Queue<String> clientViolations = new ConcurrentLinkedQueue<>();
    Queue<Double> latencies = new ConcurrentLinkedQueue<>();
    AtomicInteger flaps = new AtomicInteger();
    long elapsed;
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(kubelet.pluginDir())
                .registrationMode(RegistrationMode.LEGACY)
                .backend(backend)
                .listener(listener)
                .start();
        RawClient client = RawClient.connect(host.status(RESOURCE).socket(), 2)) {
      kubelet.awaitDevices(RESOURCE, l -> l.size() == DEVICES, Duration.ofSeconds(60));
      AtomicBoolean stop = new AtomicBoolean();
      Thread flapper =
          new Thread(
              () -> {
                while (!stop.get()) {
                  backend.flip();
                  flaps.incrementAndGet();
                  try {
                    // Paced by the core: the next flip once this one reached the kubelet.
                    changed.tryAcquire(1, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "flapper");
      flapper.start();
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      long t0 = System.nanoTime();
      for (int t = 0; t < threads; t++) {
        pool.execute(
            () -> {
              for (int i = 0; i < calls; i++) {
                List<String> ids = pick();
                long start = System.nanoTime();
                try {
                  AllocateResponse r = client.blocking().allocate(request(ids));
                  latencies.add((System.nanoTime() - start) / 1e6);
                  ok.incrementAndGet();
                  backend.checkResponse(ids, r, clientViolations);
                } catch (StatusRuntimeException e) {
                  latencies.add((System.nanoTime() - start) / 1e6);
                  if (backend.isExpectedRefusal(ids, e.getStatus())) {
                    refused.incrementAndGet();
                  } else {
                    unexpected.add(ids + " -> " + e.getStatus());
                  }
                } catch (RuntimeException e) {
                  unexpected.add(ids + " -> " + e);
                }
              }
            });
      }
      pool.shutdown();
      boolean finished = pool.awaitTermination(10, TimeUnit.MINUTES);
      elapsed = System.nanoTime() - t0;
      stop.set(true);
      flapper.join(5000);
      assertThat(finished).as("all allocating threads finished (no deadlock)").isTrue();
      assertThat(host.isReady()).isTrue();
    }
    int total = threads * calls;
    Figures.print(
        String.format(
            "concurrent-allocate threads=%d calls=%d ok=%d failedPrecondition=%d unexpected=%d"
                + " unhealthyAllocated=%d healthFlips=%d %s throughput=%.0f/s",
            threads,
            total,
            ok.get(),
            refused.get(),
            unexpected.size(),
            backend.violations.size() + clientViolations.size(),
            flaps.get(),
            Figures.latency(new ArrayList<>(latencies)),
            total / (elapsed / 1e9)));
    assertThat(unexpected).as("unexpected errors").isEmpty();
    assertThat(backend.violations).as("allocator called with a device unhealthy there").isEmpty();
    assertThat(clientViolations).as("responses for devices unhealthy at validation").isEmpty();
    assertThat(ok.get() + refused.get()).isEqualTo(total);
    assertThat(ok.get()).as("successful allocations").isPositive();
    assertThat(refused.get()).as("refusals: health really flapped under the calls").isPositive();
  }

  static List<String> pick() {
    ThreadLocalRandom r = ThreadLocalRandom.current();
    int a = r.nextInt(DEVICES);
    if (r.nextBoolean()) {
      return List.of("d" + a);
    }
    int b = (a + 1 + r.nextInt(DEVICES - 1)) % DEVICES;
    return List.of("d" + a, "d" + b);
  }

  static AllocateRequest request(List<String> ids) {
    return AllocateRequest.newBuilder()
        .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(ids))
        .build();
  }

  /** Publishes tagged lists and checks what the core hands it. */
  static final class FlappingBackend extends ScriptedBackend.Capable {
    private final AtomicLong version = new AtomicLong();
    private final Map<Long, Set<String>> unhealthyIn = new ConcurrentHashMap<>();
    private final Map<Long, Long> publishedAt = new ConcurrentHashMap<>();
    private final Set<String> unhealthyNow = new HashSet<>();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();

    FlappingBackend() {
      super(RESOURCE, List.of());
      replace(tagged(0, Set.of()));
      onAllocate =
          request -> {
            for (Device d : request.devices()) {
              long v = versionOf(d.allocation().env(), d.id());
              Set<String> bad = unhealthyIn.get(v);
              if (bad == null || bad.contains(d.id()) || !d.isHealthy()) {
                violations.add(d.id() + " unhealthy in version " + v + " was handed to Allocate");
              }
            }
            return request.defaultAllocation();
          };
    }

    /** Flips one to three devices' health and publishes the list as a new version. */
    synchronized void flip() {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      int n = 1 + r.nextInt(3);
      for (int i = 0; i < n; i++) {
        // About a quarter unhealthy at any time: flips heal when more are down.
        if (unhealthyNow.size() >= DEVICES / 4) {
          unhealthyNow.remove(List.copyOf(unhealthyNow).get(r.nextInt(unhealthyNow.size())));
        } else {
          unhealthyNow.add("d" + r.nextInt(DEVICES));
        }
      }
      long v = version.incrementAndGet();
      publish(tagged(v, Set.copyOf(unhealthyNow)));
    }

    private List<Device> tagged(long v, Set<String> unhealthy) {
      unhealthyIn.put(v, unhealthy);
      publishedAt.put(v, System.nanoTime());
      List<Device> list = new ArrayList<>(DEVICES);
      for (int i = 0; i < DEVICES; i++) {
        String id = "d" + i;
        list.add(
            Device.builder(id)
                .health(unhealthy.contains(id) ? Health.UNHEALTHY : Health.HEALTHY)
                .env("SNAP_" + id, Long.toString(v))
                .build());
      }
      return list;
    }

    static long versionOf(Map<String, String> env, String id) {
      String v = env.get("SNAP_" + id);
      return v == null ? -1 : Long.parseLong(v);
    }

    /** A success must carry, for every device, a version in which the device was healthy. */
    void checkResponse(List<String> ids, AllocateResponse r, Queue<String> out) {
      if (r.getContainerResponsesCount() != 1) {
        out.add(ids + ": " + r.getContainerResponsesCount() + " container responses");
        return;
      }
      ContainerAllocateResponse c = r.getContainerResponses(0);
      for (String id : ids) {
        long v = versionOf(c.getEnvsMap(), id);
        Set<String> bad = unhealthyIn.get(v);
        if (bad == null || bad.contains(id)) {
          out.add(id + " allocated in version " + v + " where it was unhealthy (or unknown)");
        }
      }
    }

    /** FAILED_PRECONDITION naming requested devices that were unhealthy in a published version. */
    boolean isExpectedRefusal(List<String> ids, Status status) {
      if (status.getCode() != Status.Code.FAILED_PRECONDITION
          || status.getDescription() == null
          || !status.getDescription().contains("names unhealthy devices")) {
        return false;
      }
      long now = System.nanoTime();
      boolean namesOne = false;
      for (String id : ids) {
        if (status.getDescription().contains("\"" + id + "\"")) {
          namesOne = true;
          boolean wasUnhealthy =
              unhealthyIn.entrySet().stream()
                  .anyMatch(
                      e ->
                          e.getValue().contains(id)
                              && publishedAt.getOrDefault(e.getKey(), now) <= now);
          if (!wasUnhealthy) {
            return false;
          }
        }
      }
      return namesOne;
    }
  }
}
