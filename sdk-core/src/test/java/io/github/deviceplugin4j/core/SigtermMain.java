package io.github.deviceplugin4j.core;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * A plugin's {@code main} for {@link ReliabilityRegressionTest}: {@code run()} on the plugin
 * directory given as the first argument; with {@code --stray-thread}, also a non-daemon thread that
 * never ends (an application bug the library must not turn into a process that ignores SIGTERM).
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
    DevicePluginHost.builder()
        .pluginDir(Path.of(args[0]))
        .registrationMode(RegistrationMode.LEGACY)
        .backend(TestBackend.of("example.com/sig", "d0"))
        .run();
    System.out.println("run() returned");
  }
}
