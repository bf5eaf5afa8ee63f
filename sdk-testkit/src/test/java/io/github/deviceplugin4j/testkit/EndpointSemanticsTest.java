package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.github.deviceplugin4j.testkit.AllocationException.Reason;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubelet's client and endpoint semantics (pkg/kubelet/cm/devicemanager: plugin/v1beta1
 * handler.go and client.go, manager.go PluginConnected/PluginDisconnected, endpoint.go): a second
 * registration keeps the old connection, any stream end disconnects the resource.
 */
class EndpointSemanticsTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String RES = "example.com/foo";

  @TempDir Path dir;

  private void awaitListFrom(FakeKubelet kubelet, String socket) {
    String endpoint = dir.resolve(socket).toString();
    kubelet.awaitEvent(
        e -> e.kind() == Kind.LIST_AND_WATCH && e.endpoint().orElse("").equals(endpoint), WAIT);
  }

  private FakeKubelet start(KubeletProfile profile) {
    return FakeKubelet.builder().pluginDir(dir).profile(profile).start();
  }

  @Test
  void aSecondRegistrationKeepsTheOldConnectionAndBothListsCount() {
    try (FakeKubelet kubelet = start(KubeletProfile.LATEST);
        TestPlugin first =
            new TestPlugin(RES, dir.resolve("a.sock")).devices(TestPlugin.healthyDevices(3));
        TestPlugin second =
            new TestPlugin(RES, dir.resolve("b.sock")).devices(TestPlugin.healthyDevices(5))) {
      first.start().register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 3, WAIT);
      Mark m = kubelet.mark();

      second.start().register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 5, WAIT);

      assertThat(kubelet.registration(RES).orElseThrow().endpoint())
          .isEqualTo(dir.resolve("b.sock").toString());
      // The kubelet does not close the superseded connection: its stream stays open...
      assertThat(first.openStreams()).isEqualTo(1);
      // ...and its lists still replace the resource's devices (keyed by resource name only).
      first.update(TestPlugin.healthyDevices(2));
      KubeletEvent fromOld =
          kubelet.awaitEvent(
              m, e -> e.kind() == Kind.LIST_AND_WATCH && e.devices().orElse(-1) == 2, WAIT);
      assertThat(fromOld.endpoint()).contains(dir.resolve("a.sock").toString());
      assertThat(kubelet.devices(RES)).hasSize(2);
      // A correct handover: no moment without allocatable devices.
      io.github.deviceplugin4j.testkit.assertj.KubeletAssertions.assertThat(kubelet)
          .hasNoUnhealthyWindow(RES, m);
    }
  }

  @Test
  void closingTheSupersededPluginDisconnectsTheResourceAndStopsTheCurrentEndpoint() {
    try (FakeKubelet kubelet = start(KubeletProfile.LATEST);
        TestPlugin first =
            new TestPlugin(RES, dir.resolve("a.sock")).devices(TestPlugin.healthyDevices(3));
        TestPlugin second =
            new TestPlugin(RES, dir.resolve("b.sock")).devices(TestPlugin.healthyDevices(3))) {
      first.start().register(kubelet.kubeletSocket());
      second.start().register(kubelet.kubeletSocket());
      awaitListFrom(kubelet, "b.sock");
      Mark m = kubelet.mark();

      first.close(); // the superseded server goes away: its stream ends

      KubeletEvent d = kubelet.awaitEvent(m, e -> e.kind() == Kind.DISCONNECT, WAIT);
      assertThat(d.endpoint()).contains(dir.resolve("a.sock").toString());
      assertThat(kubelet.allocatable(RES)).isZero();
      assertThat(kubelet.capacity(RES)).isEqualTo(3);
      assertThat(kubelet.registration(RES)).isEmpty();
      assertThatThrownBy(() -> kubelet.allocate(RES, 1))
          .isInstanceOfSatisfying(
              AllocationException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.NOT_ALLOCATABLE));

      // Since v1.37 the current connection stays open: its next list makes the devices healthy
      // again, but the endpoint stays stopped, so Allocate fails although allocatable is 3.
      assertThat(second.openStreams()).isEqualTo(1);
      second.update(TestPlugin.healthyDevices(3));
      kubelet.awaitDevices(RES, l -> l.stream().allMatch(DeviceState::healthy), WAIT);
      assertThat(kubelet.allocatable(RES)).isEqualTo(3);
      assertThatThrownBy(() -> kubelet.allocate(RES, 1))
          .isInstanceOfSatisfying(
              AllocationException.class,
              e -> {
                assertThat(e.reason()).isEqualTo(Reason.ENDPOINT_STOPPED);
                assertThat(e.description())
                    .endsWith("endpoint " + dir.resolve("b.sock") + " has been stopped");
              });
      assertThat(kubelet.unhealthyWindows(RES, m)).singleElement().satisfies(w -> w.open());

      // Only a new registration replaces the stopped endpoint.
      second.register(kubelet.kubeletSocket());
      kubelet.awaitRegistration(RES, m, WAIT);
      assertThat(kubelet.allocate(RES, 1).deviceIds()).hasSize(1);
      assertThat(kubelet.unhealthyWindows(RES, m))
          .singleElement()
          .satisfies(w -> assertThat(w.open()).isFalse());
    }
  }

  @Test
  void upToV136AStreamEndClosesTheNewestConnectionInstead() {
    try (FakeKubelet kubelet = start(KubeletProfile.V1_27);
        TestPlugin first =
            new TestPlugin(RES, dir.resolve("a.sock")).devices(TestPlugin.healthyDevices(3));
        TestPlugin second =
            new TestPlugin(RES, dir.resolve("b.sock")).devices(TestPlugin.healthyDevices(3))) {
      first.start().register(kubelet.kubeletSocket());
      second.start().register(kubelet.kubeletSocket());
      awaitListFrom(kubelet, "b.sock");
      Mark m = kubelet.mark();

      first.close();

      // runClient looks the client up by name: the newest one is disconnected and closed.
      KubeletEvent d = kubelet.awaitEvent(m, e -> e.kind() == Kind.DISCONNECT, WAIT);
      assertThat(d.endpoint()).contains(dir.resolve("b.sock").toString());
      Awaitility.await().atMost(WAIT).until(() -> second.openStreams() == 0);
      assertThat(kubelet.allocatable(RES)).isZero();
      assertThat(kubelet.unhealthyWindows(RES, m)).hasSize(1);
    }
  }

  @Test
  void dropConnectionStopsTheEndpointAndRestartContainerThenFails() throws Exception {
    try (FakeKubelet kubelet = start(KubeletProfile.LATEST);
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("a.sock"))
                .devices(TestPlugin.healthyDevices(2))
                .options(true, false)) {
      plugin.start().register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
      Allocation a = kubelet.allocate(RES, 1);
      assertThat(plugin.preStarts.poll(5, TimeUnit.SECONDS)).isNotNull();

      kubelet.dropConnection(RES);

      assertThatThrownBy(() -> kubelet.restartContainer(a.podUid(), a.containerName()))
          .isInstanceOfSatisfying(
              AllocationException.class,
              e -> {
                assertThat(e.reason()).isEqualTo(Reason.ENDPOINT_STOPPED);
                assertThat(e.description())
                    .startsWith("device plugin PreStartContainer rpc failed with err: endpoint");
              });
    }
  }

  @Test
  void restartContainerCallsPreStartAgainWithTheSameDevicesWhateverTheirHealth() throws Exception {
    try (FakeKubelet kubelet = start(KubeletProfile.LATEST);
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("a.sock"))
                .devices(TestPlugin.healthyDevices(2))
                .options(true, false)) {
      plugin.start().register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
      Allocation a = kubelet.allocate(RES, 2);
      assertThat(plugin.preStarts.poll(5, TimeUnit.SECONDS)).isNotNull();
      List<io.github.deviceplugin4j.api.v1beta1.Device> sick = new ArrayList<>();
      for (var d : TestPlugin.healthyDevices(2)) {
        sick.add(d.toBuilder().setHealth(DeviceState.UNHEALTHY).build());
      }
      plugin.update(sick);
      kubelet.awaitDevices(RES, l -> l.stream().noneMatch(DeviceState::healthy), WAIT);

      kubelet.restartContainer(a.podUid(), a.containerName());

      var again = plugin.preStarts.poll(5, TimeUnit.SECONDS);
      assertThat(again).isNotNull();
      assertThat(again.getDevicesIdsList()).containsExactlyInAnyOrderElementsOf(a.deviceIds());
      assertThat(plugin.allocations).hasSize(1); // no second Allocate
    }
  }

  @Test
  void availableDeviceIdsComeInNoParticularOrder() {
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir).randomSeed(7).start();
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("a.sock"))
                .devices(TestPlugin.healthyDevices(8))
                .options(false, true)) {
      List<List<String>> seen = new ArrayList<>();
      plugin.preferredAnswer(
          r -> {
            PreferredAllocationRequest req = r;
            List<String> ids = req.getContainerRequests(0).getAvailableDeviceIDsList();
            seen.add(ids);
            return PreferredAllocationResponse.newBuilder()
                .addContainerResponses(
                    io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationResponse
                        .newBuilder()
                        .addDeviceIDs(ids.get(0)))
                .build();
          });
      plugin.start().register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 8, WAIT);
      for (int i = 0; i < 3; i++) {
        kubelet.allocate(RES, 1);
      }
      assertThat(seen).hasSize(3);
      assertThat(seen).anyMatch(ids -> !ids.equals(ids.stream().sorted().toList()));
    }
  }

  @Test
  void theV126ProfileDeletesEveryFileButTheCheckpointOnStart() throws Exception {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("notes.txt"), "x");
    Files.writeString(dir.resolve(FakeKubelet.CHECKPOINT_FILE), "{}");
    Files.createDirectories(dir.resolve("sub"));
    try (FakeKubelet kubelet = start(KubeletProfile.V1_26)) {
      assertThat(dir.resolve("notes.txt")).doesNotExist();
      assertThat(dir.resolve(FakeKubelet.CHECKPOINT_FILE)).exists();
      assertThat(dir.resolve("sub")).isDirectory();
      assertThat(dir.resolve("DEPRECATION")).doesNotExist();
    }
    try (FakeKubelet kubelet = start(KubeletProfile.LATEST)) {
      Files.writeString(dir.resolve("notes.txt"), "x");
      kubelet.restart();
      assertThat(dir.resolve("notes.txt")).exists();
    }
  }
}
