package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two instances of one plugin starting at the same moment on one directory (a rolling update whose
 * old and new pods start together): exactly one may serve the socket; the other must fail with a
 * clear error rather than silently replace the winner's socket.
 */
class ConcurrentStartTest {

  static final String RESOURCE = "example.com/race";
  static final int ROUNDS = 40;

  @TempDir Path tmp;

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void simultaneousStarts_exactlyOneServes() throws Exception {
    int bothStarted = 0;
    int oneStarted = 0;
    int noneStarted = 0;
    List<String> losers = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      Path dir = Files.createDirectories(tmp.resolve("r" + round));
      CyclicBarrier barrier = new CyclicBarrier(2);
      CompletableFuture<Object> a = CompletableFuture.supplyAsync(() -> start(dir, "a", barrier));
      CompletableFuture<Object> b = CompletableFuture.supplyAsync(() -> start(dir, "b", barrier));
      Object ra = a.get(30, TimeUnit.SECONDS);
      Object rb = b.get(30, TimeUnit.SECONDS);
      int started = 0;
      for (Object r : List.of(ra, rb)) {
        if (r instanceof DevicePluginHost h) {
          started++;
          h.close();
        } else {
          losers.add(String.valueOf(r));
        }
      }
      switch (started) {
        case 2 -> bothStarted++;
        case 1 -> oneStarted++;
        default -> noneStarted++;
      }
      assertThat(PluginProcessTest.privateLeftovers(dir)).isEmpty();
    }
    Figures.print(
        String.format(
            "concurrent-start rounds=%d exactlyOneServed=%d bothServed=%d noneServed=%d",
            ROUNDS, oneStarted, bothStarted, noneStarted));
    assertThat(bothStarted)
        .as("rounds where the loser silently replaced the winner's socket")
        .isZero();
    assertThat(noneStarted).as("rounds where neither started").isZero();
    assertThat(losers).allMatch(l -> l.contains("another live process is serving"));
  }

  private static Object start(Path dir, String device, CyclicBarrier barrier) {
    try {
      barrier.await(10, TimeUnit.SECONDS);
      return DevicePluginHost.builder()
          .pluginDir(dir)
          .registrationMode(RegistrationMode.LEGACY)
          .backend(new ScriptedBackend(RESOURCE, List.of(Device.healthy(device))))
          .start();
    } catch (ConfigurationException e) {
      return e.getMessage();
    } catch (Exception e) {
      return e.toString();
    }
  }
}
