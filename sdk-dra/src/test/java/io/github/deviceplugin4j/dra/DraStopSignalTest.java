package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A driver process stopped with SIGTERM removes its own sockets, no others, and exits with 0. */
class DraStopSignalTest {

  @TempDir Path tmp;

  @Test
  void sigtermRemovesThisInstancesSocketsOnlyAndExitsCleanly() throws Exception {
    Path plugins = tmp.resolve("p");
    Path registry = tmp.resolve("r");
    try (DraPluginHost other =
        DraPluginHost.builder("gpu.example.com", new RecordingDriver())
            .pluginDir(plugins)
            .registryDir(registry)
            .rollingUpdate("new-pod")
            .start()) {
      Process old =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  DriverMain.class.getName(),
                  plugins.toString(),
                  registry.toString(),
                  "old-pod")
              .redirectErrorStream(true)
              .redirectOutput(tmp.resolve("old.log").toFile())
              .start();
      try {
        Path oldDra = plugins.resolve("dra-old-pod.sock");
        Path oldReg = registry.resolve("gpu.example.com-old-pod-reg.sock");
        await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(oldReg));
        assertThat(oldDra).exists();

        old.destroy(); // SIGTERM

        assertThat(old.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(old.exitValue()).as(Files.readString(tmp.resolve("old.log"))).isZero();
        assertThat(oldDra).doesNotExist();
        assertThat(oldReg).doesNotExist();
        assertThat(other.draSocket()).exists();
        assertThat(other.registrationSocket()).exists();
      } finally {
        old.destroyForcibly();
      }
    }
  }
}
