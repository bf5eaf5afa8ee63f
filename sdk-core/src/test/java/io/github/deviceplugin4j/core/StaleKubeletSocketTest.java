package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kubelet.sock nobody listens on (the kubelet stopped, or is restarting and has not cleaned up
 * yet) is a wait for the kubelet, like a missing one: no error is reported, and the plugin
 * registers as soon as a kubelet serves the socket again.
 */
class StaleKubeletSocketTest {

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

  /** Leaves a socket file at the path with no server behind it. */
  private static void staleSocket(Path path) throws Exception {
    try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.bind(UnixDomainSocketAddress.of(path));
    }
  }

  @Test
  void aStaleKubeletSocketIsAWaitNotAnError_andTheNextKubeletGetsTheRegistration()
      throws Exception {
    Path pluginDir = tmp.resolve("dp");
    Files.createDirectories(pluginDir);
    Path kubeletSock = pluginDir.resolve("kubelet.sock");
    staleSocket(kubeletSock);
    RecordingListener listener = new RecordingListener();
    host =
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(TestBackend.of(RESOURCE, "d0"))
            .listener(listener)
            .start();

    await()
        .atMost(WAIT)
        .until(
            () -> host.status(RESOURCE).lastError().orElse(""),
            e -> e.contains("does not accept connections"));
    assertThat(host.status(RESOURCE).lastError().orElseThrow())
        .startsWith("waiting for the kubelet: ")
        .contains(kubeletSock.toString());
    assertThat(listener.errors).isEmpty();
    assertThat(host.status(RESOURCE).registered()).isFalse();

    Files.delete(kubeletSock);
    kubelet = FakeKubelet.builder().pluginDir(pluginDir).start();
    kubelet.awaitRegistration(RESOURCE, WAIT);
    await().atMost(WAIT).until(() -> host.status(RESOURCE).registered());
    assertThat(listener.errors).isEmpty();
  }
}
