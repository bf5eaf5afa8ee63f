package io.github.deviceplugin4j.core;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A plugin's {@code main} for {@link ReliabilityRegressionTest}: {@code run()} on the plugin
 * directory given as the first argument; with {@code --stray-thread}, also a non-daemon thread that
 * never ends (an application bug the library must not turn into a process that ignores SIGTERM);
 * with {@code --fatal-rescan}, a backend whose second device read (a rescan, 100 ms after the
 * start) throws an {@link OutOfMemoryError}.
 */
public final class SigtermMain {
  private SigtermMain() {}

  /**
   * Runs a one-device plugin until SIGTERM.
   *
   * @param args the plugin directory, optionally {@code --stray-thread}
   * @throws InterruptedException never in practice
   */
  public static void main(String[] args) throws InterruptedException {
    if (args.length > 1 && args[1].equals("--stray-thread")) {
      Thread stray =
          new Thread(
              () -> {
                try {
                  new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "stray");
      stray.setDaemon(false);
      stray.start();
    }
    TestBackend backend = TestBackend.of("example.com/sig", "d0");
    if (args.length > 1 && args[1].equals("--fatal-rescan")) {
      backend = new FailsOnRescan("example.com/sig");
    }
    DevicePluginHost.builder()
        .pluginDir(Path.of(args[0]))
        .registrationMode(RegistrationMode.LEGACY)
        .backend(backend)
        .run();
    System.out.println("run() returned");
  }

  /** Its second {@code devices()} throws an {@link OutOfMemoryError}, as a full heap would. */
  static final class FailsOnRescan extends TestBackend {
    private final AtomicInteger reads = new AtomicInteger();

    FailsOnRescan(String resourceName) {
      super(resourceName, List.of(Device.healthy("d0")));
      pollInterval = Duration.ofMillis(100);
    }

    @Override
    public List<Device> devices() {
      if (reads.incrementAndGet() > 1) {
        throw new OutOfMemoryError("simulated by the test: Java heap space");
      }
      return super.devices();
    }
  }
}
