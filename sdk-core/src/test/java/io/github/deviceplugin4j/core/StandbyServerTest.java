package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.assertj.KubeletAssertions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Serving the socket again (a restarting kubelet deletes it right before kubelet.sock returns) is
 * on the way to the Register: a server bound in advance in a private directory is put in place by a
 * rename instead of a server start.
 */
class StandbyServerTest {

  private static final String RESOURCE = "example.com/dev";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;

  private FakeKubelet kubelet;
  private DevicePluginHost host;

  @AfterEach
  void close() throws Exception {
    if (host != null) {
      host.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
    TestSupport.awaitNoCoreThreads();
  }

  /** The standby's socket inside its private (dot) directory, if one is bound. */
  private static Optional<Path> standby(Path pluginDir) throws IOException {
    try (Stream<Path> entries = Files.list(pluginDir)) {
      return entries
          .filter(p -> p.getFileName().toString().startsWith(".dp4j") && Files.isDirectory(p))
          .map(p -> p.resolve(".s"))
          .filter(TestSupport::isSocket)
          .findFirst();
    }
  }

  private static Object inode(Path p) throws IOException {
    return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
  }

  @Test
  void theSocketServedAgainIsTheStandbyPutInPlace_andANewStandbyIsBound() throws Exception {
    Path pluginDir = tmp.resolve("dp");
    kubelet = FakeKubelet.builder().pluginDir(pluginDir).start();
    host =
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(TestBackend.of(RESOURCE, "d0"))
            .start();
    kubelet.awaitRegistration(RESOURCE, WAIT);
    Path socket = host.status(RESOURCE).socket();
    Path standby = await().atMost(WAIT).until(() -> standby(pluginDir), Optional::isPresent).get();
    Object standbyInode = inode(standby);

    Mark deleted = kubelet.mark();
    Files.delete(socket);
    kubelet.awaitRegistration(RESOURCE, deleted, WAIT);

    assertThat(inode(socket)).isEqualTo(standbyInode);
    Path next = await().atMost(WAIT).until(() -> standby(pluginDir), Optional::isPresent).get();
    assertThat(inode(next)).isNotEqualTo(standbyInode);
    KubeletAssertions.assertThat(kubelet).hasNoUnhealthyWindow(RESOURCE, deleted);
  }

  @Test
  void aKubeletRestartReRegistersThroughTheStandby_andStopLeavesNoPrivateDirectory()
      throws Exception {
    Path pluginDir = tmp.resolve("dp");
    kubelet = FakeKubelet.builder().pluginDir(pluginDir).start();
    host =
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(TestBackend.of(RESOURCE, "d0"))
            .start();
    kubelet.awaitRegistration(RESOURCE, WAIT);
    Path socket = host.status(RESOURCE).socket();
    Object standbyInode =
        inode(await().atMost(WAIT).until(() -> standby(pluginDir), Optional::isPresent).get());

    // The kubelet deletes the sockets of its directory and serves kubelet.sock again.
    Mark restarted = kubelet.restart();
    kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
    assertThat(inode(socket)).isEqualTo(standbyInode);

    host.close();
    host = null;
    try (Stream<Path> entries = Files.list(pluginDir)) {
      List<String> left =
          entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".dp4j")).toList();
      assertThat(left).isEmpty();
    }
  }
}
