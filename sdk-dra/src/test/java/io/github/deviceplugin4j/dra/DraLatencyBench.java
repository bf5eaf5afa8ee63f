package io.github.deviceplugin4j.dra;

import io.github.deviceplugin4j.api.dra.v1.Claim;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Prints prepare and unprepare latency (p50, p99) over the driver's Unix socket, for requests of 1
 * and 8 claims, with a driver that does no work: what the host costs (gRPC, lock, checkpoint with
 * fsync). Not a test. Run from the sdk-dra module:
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat cp.txt) io.github.deviceplugin4j.dra.DraLatencyBench [dir] [rounds]
 * </pre>
 *
 * <p>{@code dir} is where the plugin directory goes (default: a new temporary directory): put it on
 * the file system the node's {@code /var/lib/kubelet} is on, fsync costs differ widely.
 */
public final class DraLatencyBench {
  private DraLatencyBench() {}

  /**
   * Runs the measurement.
   *
   * @param args optional directory and number of measured rounds
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    Path base = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("drab");
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    DraDriver noop =
        new DraDriver() {
          @Override
          public PrepareResult prepare(io.github.deviceplugin4j.dra.Claim claim) {
            return PrepareResult.prepared(
                PreparedDevice.of("node-1", "dev-0", "example.com/gpu=" + claim.uid()));
          }

          @Override
          public void unprepare(io.github.deviceplugin4j.dra.Claim claim, List<PreparedDevice> d) {}
        };
    try (DraPluginHost host =
            DraPluginHost.builder("bench.example.com", noop)
                .pluginDir(base.resolve("p"))
                .registryDir(base.resolve("r"))
                .start();
        KubeletClient kubelet = new KubeletClient()) {
      System.out.printf("plugin directory %s, %d rounds per size%n", base.resolve("p"), rounds);
      for (int claims : new int[] {1, 8}) {
        run(kubelet, host.draSocket(), claims, rounds / 4, null, null); // warm-up
        long[] prepare = new long[rounds];
        long[] unprepare = new long[rounds];
        run(kubelet, host.draSocket(), claims, rounds, prepare, unprepare);
        System.out.printf(
            "%d claim(s): prepare p50 %.0f us p99 %.0f us | unprepare p50 %.0f us p99 %.0f us%n",
            claims, pct(prepare, 50), pct(prepare, 99), pct(unprepare, 50), pct(unprepare, 99));
      }
    }
  }

  private static void run(
      KubeletClient kubelet, Path socket, int claims, int rounds, long[] prep, long[] unprep) {
    var stub = kubelet.v1(socket);
    for (int r = 0; r < rounds; r++) {
      Claim[] batch = new Claim[claims];
      for (int i = 0; i < claims; i++) {
        batch[i] = KubeletClient.claim(claims + "-" + r + "-" + i + "-" + System.nanoTime());
      }
      var prepareRequest =
          io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesRequest.newBuilder()
              .addAllClaims(List.of(batch))
              .build();
      var unprepareRequest =
          io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesRequest.newBuilder()
              .addAllClaims(List.of(batch))
              .build();
      long t0 = System.nanoTime();
      stub.nodePrepareResources(prepareRequest);
      long t1 = System.nanoTime();
      stub.nodeUnprepareResources(unprepareRequest);
      long t2 = System.nanoTime();
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
