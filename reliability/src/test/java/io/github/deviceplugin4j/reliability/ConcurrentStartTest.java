package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
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
 * old and new pods start together): exactly one holds the serving lease and the resource's socket;
 * the other serves its own socket (a handover in waiting), and neither replaces the other's file.
 */
class ConcurrentStartTest {

  static final String RESOURCE = "example.com/race";
  static final int ROUNDS = 40;

  @TempDir Path tmp;

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void simultaneousStarts_exactlyOneHoldsTheResourceSocket() throws Exception {
    int oneCanonical = 0;
    List<String> problems = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      Path dir = Files.createDirectories(tmp.resolve("r" + round));
      CyclicBarrier barrier = new CyclicBarrier(2);
      CompletableFuture<Object> a = CompletableFuture.supplyAsync(() -> start(dir, "a", barrier));
      CompletableFuture<Object> b = CompletableFuture.supplyAsync(() -> start(dir, "b", barrier));
      List<Object> results = List.of(a.get(30, TimeUnit.SECONDS), b.get(30, TimeUnit.SECONDS));
      List<Path> sockets = new ArrayList<>();
      for (Object r : results) {
        if (r instanceof DevicePluginHost h) {
          Path s = h.status(RESOURCE).socket();
          if (!SocketFiles.isLive(s)) {
            problems.add("round " + round + ": " + s + " does not serve");
          }
          sockets.add(s);
        } else {
          problems.add("round " + round + ": " + r);
        }
      }
      Path canonical = dir.resolve("example.com_race.sock");
      if (sockets.stream().filter(canonical::equals).count() == 1 && sockets.size() == 2) {
        oneCanonical++;
      } else {
        problems.add("round " + round + ": sockets " + sockets);
      }
      for (Object r : results) {
        if (r instanceof DevicePluginHost h) {
          h.close();
        }
      }
      assertThat(PluginProcessTest.privateLeftovers(dir)).isEmpty();
    }
    Figures.print(
        String.format(
            "concurrent-start rounds=%d bothServedOneOnTheResourceSocket=%d problems=%d",
            ROUNDS, oneCanonical, problems.size()));
    assertThat(problems).isEmpty();
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
