package io.github.deviceplugin4j.dra;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.github.deviceplugin4j.api.dra.v1.Claim;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesRequest;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.dra.slices.MockApiServer;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Prints prepare and unprepare latency (p50, p99) of a {@link BackendDriver} over the driver's Unix
 * socket, for requests of 1 and 8 claims, with fabric8's mock API server (CRUD mode, real HTTP on
 * loopback) answering the claim reads: what a vendor's driver costs per claim (gRPC, lock,
 * checkpoint with fsync, one ResourceClaim GET, one CDI spec written atomically, and removed). Not
 * a test. Run from the sdk-dra module:
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat cp.txt) io.github.deviceplugin4j.dra.BackendDriverLatencyBench [dir] [rounds]
 * </pre>
 */
public final class BackendDriverLatencyBench {
  private static final String DRIVER = "bench.example.com";
  private static final String NODE = "node-1";

  private BackendDriverLatencyBench() {}

  /**
   * Runs the measurement.
   *
   * @param args optional directory and number of measured rounds per size
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    Path base = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("drab");
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      devices.add(
          Device.builder("dev" + i)
              .deviceNode(DeviceNode.rw("/dev/bench" + i))
              .env("BENCH_DEVICE_" + i, String.valueOf(i))
              .build());
    }
    DeviceBackend backend =
        new DeviceBackend() {
          @Override
          public String resourceName() {
            return "bench.example.com/dev";
          }

          @Override
          public List<Device> devices() {
            return devices;
          }
        };
    try (MockApiServer api = new MockApiServer();
        KubeletClient kubelet = new KubeletClient()) {
      api.createNode(NODE);
      try (DraPluginHost host =
          BackendDriver.builder(DRIVER, backend)
              .kubernetesClient(api.client)
              .nodeName(NODE)
              .cdiDirectory(base.resolve("cdi"))
              .sliceOptions(s -> s.coalesceDelay(Duration.ZERO))
              .host()
              .pluginDir(base.resolve("p"))
              .registryDir(base.resolve("r"))
              .start()) {
        System.out.printf(
            "plugin directory %s, CDI directory %s, %d rounds per size, mock API server%n",
            base.resolve("p"), base.resolve("cdi"), rounds);
        long[] get = new long[rounds];
        ResourceClaim probe =
            DraScheduler.forNode(api.client, NODE)
                .assign("bench", "probe", DraScheduler.device("dev", DRIVER, NODE, "dev0"));
        var claimsApi =
            api.client.dynamicResourceAllocation().v1().resourceClaims().inNamespace("bench");
        for (int r = -rounds / 4; r < rounds; r++) {
          long t0 = System.nanoTime();
          claimsApi.withName(probe.getMetadata().getName()).get();
          if (r >= 0) {
            get[r] = System.nanoTime() - t0;
          }
        }
        System.out.printf(
            "reference: one ResourceClaim GET from the mock API server p50 %.0f us p99 %.0f us%n",
            pct(get, 50), pct(get, 99));
        for (int claims : new int[] {1, 8}) {
          run(api, kubelet, host.draSocket(), claims, Math.max(20, rounds / 4), null, null);
          long[] prepare = new long[rounds];
          long[] unprepare = new long[rounds];
          run(api, kubelet, host.draSocket(), claims, rounds, prepare, unprepare);
          System.out.printf(
              "%d claim(s): prepare p50 %.0f us p99 %.0f us | unprepare p50 %.0f us p99 %.0f us%n",
              claims, pct(prepare, 50), pct(prepare, 99), pct(unprepare, 50), pct(unprepare, 99));
        }
      }
    }
  }

  private static void run(
      MockApiServer api,
      KubeletClient kubelet,
      Path socket,
      int claims,
      int rounds,
      long[] prep,
      long[] unprep) {
    var channel = kubelet.channel(socket);
    for (int r = 0; r < rounds; r++) {
      List<Claim> batch = new ArrayList<>();
      for (int i = 0; i < claims; i++) {
        ResourceClaim c =
            DraScheduler.forNode(api.client, NODE)
                .assign(
                    "bench",
                    (prep == null ? "w" : "m") + claims + "-" + r + "-" + i,
                    DraScheduler.device("dev", DRIVER, NODE, "dev" + i));
        batch.add(
            Claim.newBuilder()
                .setNamespace("bench")
                .setName(c.getMetadata().getName())
                .setUid(c.getMetadata().getUid())
                .build());
      }
      var prepareRequest = NodePrepareResourcesRequest.newBuilder().addAllClaims(batch).build();
      var unprepareRequest = NodeUnprepareResourcesRequest.newBuilder().addAllClaims(batch).build();
      var stub =
          io.github.deviceplugin4j.api.dra.v1.DRAPluginGrpc.newBlockingStub(channel)
              .withDeadlineAfter(30, java.util.concurrent.TimeUnit.SECONDS);
      long t0 = System.nanoTime();
      NodePrepareResourcesResponse response = stub.nodePrepareResources(prepareRequest);
      long t1 = System.nanoTime();
      stub.nodeUnprepareResources(unprepareRequest);
      long t2 = System.nanoTime();
      response
          .getClaimsMap()
          .forEach(
              (uid, entry) -> {
                if (!entry.getError().isEmpty()) {
                  throw new IllegalStateException("claim " + uid + ": " + entry.getError());
                }
              });
      if (prep != null) {
        prep[r] = t1 - t0;
        unprep[r] = t2 - t1;
      }
    }
  }

  private static double pct(long[] nanos, int p) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, sorted.length * p / 100)] / 1000.0;
  }
}
