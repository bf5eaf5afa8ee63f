package io.github.deviceplugin4j.testkit.plugin;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * {@link TestDraDriver} as a process for {@code fake-kubelet conform --dra}: {@code DRIVER
 * DRA_SOCKET REGISTRY_SOCKET [--no-health] [--skip-all] [--full-grpc-names]}; serves until SIGTERM,
 * then removes its sockets.
 */
public final class TestDraDriverMain {
  private TestDraDriverMain() {}

  /**
   * Runs the driver.
   *
   * @param args see the class comment
   * @throws Exception when it cannot serve
   */
  public static void main(String[] args) throws Exception {
    List<String> flags = List.of(args).subList(3, args.length);
    TestDraDriver driver = new TestDraDriver(args[0], Path.of(args[1]), Path.of(args[2]));
    if (flags.contains("--full-grpc-names")) {
      // What the SDK's drivers listed until issue 29: names no kubelet knows.
      driver.pluginInfo(
          PluginInfo.newBuilder()
              .setType("DRAPlugin")
              .setName(args[0])
              .setEndpoint(Path.of(args[1]).toString())
              .addSupportedVersions("k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin")
              .addSupportedVersions("k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin")
              .build());
    }
    driver.health(!flags.contains("--no-health")).skipAll(flags.contains("--skip-all")).start();
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    driver.close();
                  } catch (Exception e) {
                    // exiting anyway
                  }
                  done.countDown();
                }));
    done.await();
  }
}
