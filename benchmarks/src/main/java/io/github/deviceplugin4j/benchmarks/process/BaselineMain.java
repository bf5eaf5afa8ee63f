package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.benchmarks.BaselinePlugin;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The hand-written grpc-java {@link BaselinePlugin} as a process: serves {@code <dir>/<socket>},
 * registers once with {@code <dir>/kubelet.sock}, runs until SIGTERM.
 *
 * <pre>
 * java -cp benchmarks/target/deviceplugin4j-benchmarks.jar \
 *     io.github.deviceplugin4j.benchmarks.process.BaselineMain /tmp/dp baseline.sock \
 *     bench.example.com/baseline 4
 * </pre>
 */
public final class BaselineMain {

  private BaselineMain() {}

  /**
   * Serves and registers.
   *
   * @param args plugin directory, socket file name, resource name, number of devices
   * @throws Exception when it cannot serve or register
   */
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      throw new IllegalArgumentException(
          "usage: BaselineMain <plugin dir> <socket name> <resource> <devices>");
    }
    Path dir = Path.of(args[0]);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < Integer.parseInt(args[3]); i++) {
      ids.add("dev-" + i);
    }
    BaselinePlugin plugin = new BaselinePlugin(args[2], dir.resolve(args[1]), ids).start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    plugin.close();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } finally {
                    stopped.countDown();
                  }
                },
                "baseline-stop"));
    plugin.register(dir.resolve("kubelet.sock"));
    stopped.await(); // until SIGTERM
  }
}
