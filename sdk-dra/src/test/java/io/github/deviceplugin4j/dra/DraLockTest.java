package io.github.deviceplugin4j.dra;

import static io.github.deviceplugin4j.dra.KubeletClient.claim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.dra.internal.ClaimLock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two instances of a driver on one plugin directory (a rolling update) never run claims at the same
 * time: in one JVM and across processes.
 */
class DraLockTest {
  // Threads of their own for the kubelet's concurrent calls: CompletableFuture's default
  // executor ran them one at a time on JDK 25 with 2 cores (a call waiting at a gate then kept
  // the next from being made at all).
  private final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void stopCallers() {
    callers.shutdownNow();
  }

  @TempDir Path tmp;

  private static boolean aThreadWaitsForTheClaimLock() {
    return Thread.getAllStackTraces().values().stream()
        .anyMatch(
            stack ->
                Arrays.stream(stack)
                    .anyMatch(
                        f ->
                            f.getClassName().equals(ClaimLock.class.getName())
                                && f.getMethodName().equals("acquire")));
  }

  @Test
  void twoHostsOnOnePluginDirectoryTakeTurns() throws Exception {
    RecordingDriver oldDriver = new RecordingDriver();
    RecordingDriver newDriver = new RecordingDriver();
    CountDownLatch gate = new CountDownLatch(1);
    oldDriver.gate = gate;
    try (KubeletClient kubelet = new KubeletClient();
        DraPluginHost oldPod =
            DraPluginHost.builder("gpu.example.com", oldDriver)
                .pluginDir(tmp.resolve("p"))
                .registryDir(tmp.resolve("r"))
                .rollingUpdate("old-pod")
                .start();
        DraPluginHost newPod =
            DraPluginHost.builder("gpu.example.com", newDriver)
                .pluginDir(tmp.resolve("p"))
                .registryDir(tmp.resolve("r"))
                .rollingUpdate("new-pod")
                .start()) {
      CompletableFuture<NodePrepareResourcesResponse> viaOld =
          CompletableFuture.supplyAsync(
              () -> kubelet.prepare(oldPod.draSocket(), claim("a")), callers);
      await().atMost(Duration.ofSeconds(20)).until(() -> oldDriver.prepared.size() == 1);

      CompletableFuture<NodePrepareResourcesResponse> viaNew =
          CompletableFuture.supplyAsync(
              () -> kubelet.prepare(newPod.draSocket(), claim("b")), callers);
      await().atMost(Duration.ofSeconds(20)).until(DraLockTest::aThreadWaitsForTheClaimLock);
      assertThat(newDriver.prepared).isEmpty();

      gate.countDown();
      viaOld.get(20, TimeUnit.SECONDS);
      viaNew.get(20, TimeUnit.SECONDS);

      assertThat(newDriver.prepared).containsExactly("b");
      // Both instances recorded into the one shared checkpoint.
      assertThat(newPod.preparedClaims()).containsOnlyKeys("a", "b");
      assertThat(oldPod.preparedClaims()).containsOnlyKeys("a", "b");
    }
  }

  @Test
  void aClaimWaitsWhileAnotherProcessHoldsTheLockFile() throws Exception {
    Path plugins = tmp.resolve("p");
    RecordingDriver driver = new RecordingDriver();
    try (KubeletClient kubelet = new KubeletClient();
        DraPluginHost host =
            DraPluginHost.builder("gpu.example.com", driver)
                .pluginDir(plugins)
                .registryDir(tmp.resolve("r"))
                .start()) {
      Process other =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  LockHolder.class.getName(),
                  plugins.resolve(ClaimLock.FILE_NAME).toString())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      try {
        BufferedReader said =
            new BufferedReader(
                new InputStreamReader(other.getInputStream(), StandardCharsets.UTF_8));
        assertThat(said.readLine()).isEqualTo("locked");

        CompletableFuture<NodePrepareResourcesResponse> call =
            CompletableFuture.supplyAsync(
                () -> kubelet.prepare(host.draSocket(), claim("a")), callers);
        await().atMost(Duration.ofSeconds(20)).until(DraLockTest::aThreadWaitsForTheClaimLock);
        assertThat(driver.prepared).isEmpty();
        assertThat(call).isNotDone();

        other.getOutputStream().close(); // the other process releases the lock and ends
        assertThat(call.get(20, TimeUnit.SECONDS).getClaimsOrThrow("a").getError()).isEmpty();
        assertThat(driver.prepared).containsExactly("a");
      } finally {
        other.destroy();
        other.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
