package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.v1beta1.Device;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeviceStateTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String RES = "example.com/foo";

  @TempDir Path dir;
  FakeKubelet kubelet;
  TestPlugin plugin;

  void start(Duration grace) {
    kubelet = FakeKubelet.builder().pluginDir(dir).gracePeriod(grace).start();
    plugin =
        new TestPlugin(RES, dir.resolve("foo.sock")).devices(TestPlugin.healthyDevices(3)).start();
    plugin.register(kubelet.kubeletSocket());
    kubelet.awaitDevices(RES, l -> l.size() == 3, WAIT);
  }

  @AfterEach
  void stop() {
    if (plugin != null) {
      plugin.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
  }

  @Test
  void eachListReplacesTheWholeListAndHealthDrivesAllocatable() {
    start(Duration.ofMinutes(5));
    plugin.update(
        List.of(
            TestPlugin.device("dev-0", "Healthy", 0),
            TestPlugin.device("dev-9", "Unhealthy", -1),
            TestPlugin.device("dev-7", "healthy", -1)));
    List<DeviceState> list =
        kubelet.awaitDevices(RES, l -> l.stream().anyMatch(d -> d.id().equals("dev-9")), WAIT);
    assertThat(list).extracting(DeviceState::id).containsExactly("dev-0", "dev-9", "dev-7");
    assertThat(list.get(1).numaNodes()).isEmpty();
    assertThat(kubelet.capacity(RES)).isEqualTo(3);
    // Only the exact string "Healthy" counts, as in the kubelet.
    assertThat(kubelet.allocatable(RES)).isEqualTo(1);
    assertThat(list.get(2).health()).isEqualTo("healthy");
    assertThat(list.get(2).healthy()).isFalse();
  }

  @Test
  void capacityAndAllocatableCountDistinctIdsLikeTheKubeletsSets() {
    start(Duration.ofMinutes(5));
    plugin.update(
        List.of(
            TestPlugin.device("a", "Healthy", -1),
            TestPlugin.device("a", "Healthy", -1),
            TestPlugin.device("b", "Unhealthy", -1),
            TestPlugin.device("b", "Healthy", -1)));
    kubelet.awaitDevices(RES, l -> l.size() == 4, WAIT);
    assertThat(kubelet.allocatable(RES)).isEqualTo(2);
    assertThat(kubelet.capacity(RES)).isEqualTo(3);
  }

  @Test
  void aDroppedConnectionMakesDevicesUnhealthyAtOnceAndRemovesTheResourceAfterTheGracePeriod() {
    start(Duration.ofMillis(300));
    plugin.stop();
    List<DeviceState> list =
        kubelet.awaitDevices(RES, l -> l.stream().noneMatch(DeviceState::healthy), WAIT);
    assertThat(list).hasSize(3).allMatch(d -> d.health().equals("Unhealthy"));
    assertThat(kubelet.capacity(RES)).isEqualTo(3);
    assertThat(kubelet.allocatable(RES)).isZero();
    assertThat(kubelet.registration(RES)).isEmpty();
    KubeletEvent removed =
        kubelet.awaitEvent(e -> e.kind() == Kind.RESOURCE_REMOVED, Duration.ofSeconds(60));
    KubeletEvent disconnected =
        kubelet.events().stream()
            .filter(e -> e.kind() == Kind.DISCONNECT)
            .findFirst()
            .orElseThrow();
    assertThat(Duration.between(disconnected.time(), removed.time()))
        .isGreaterThanOrEqualTo(Duration.ofMillis(290));
    assertThat(kubelet.devices(RES)).isEmpty();
    assertThat(kubelet.resources()).doesNotContain(RES);
  }

  @Test
  void registeringAgainWithinTheGracePeriodKeepsTheResource() {
    start(Duration.ofMillis(500));
    kubelet.dropConnection(RES);
    assertThat(kubelet.allocatable(RES)).isZero();
    plugin.register(kubelet.kubeletSocket());
    kubelet.awaitDevices(
        RES, l -> l.size() == 3 && l.stream().allMatch(DeviceState::healthy), WAIT);
    // The removal timer of the dropped connection must not fire: wait past it via a second drop's
    // timer.
    TestPlugin other =
        new TestPlugin("example.com/other", dir.resolve("o.sock"))
            .devices(TestPlugin.healthyDevices(1))
            .start();
    try {
      other.register(kubelet.kubeletSocket());
      kubelet.awaitRegistration("example.com/other", WAIT);
      kubelet.dropConnection("example.com/other");
      kubelet.awaitEvent(
          e -> e.kind() == Kind.RESOURCE_REMOVED && e.resource().equals("example.com/other"), WAIT);
    } finally {
      other.close();
    }
    assertThat(kubelet.events())
        .noneMatch(e -> e.kind() == Kind.RESOURCE_REMOVED && e.resource().equals(RES));
    assertThat(kubelet.allocatable(RES)).isEqualTo(3);
  }

  @Test
  void theKubeletEndingTheConnectionIsSeenByThePlugin() {
    start(Duration.ofMinutes(5));
    kubelet.dropConnection(RES);
    Awaitility.await().atMost(WAIT).until(() -> plugin.openStreams() == 0);
    assertThat(kubelet.connectedResources()).isEmpty();
    assertThatThrownBy(() -> kubelet.dropConnection(RES))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no plugin is connected for " + RES);
  }

  @Test
  void aPluginEndingItsStreamIsADisconnect() {
    start(Duration.ofMinutes(5));
    plugin.completeStreams();
    kubelet.awaitDevices(RES, l -> l.stream().noneMatch(DeviceState::healthy), WAIT);
    assertThat(kubelet.events())
        .anyMatch(
            e ->
                e.kind() == Kind.LIST_AND_WATCH
                    && e.outcome() == Outcome.FAILED
                    && e.detail().contains("the plugin ended the ListAndWatch stream"));
  }

  @Test
  void aListOverFourMebibytesBreaksTheResourceAsOnANode() {
    start(Duration.ofMinutes(5));
    List<Device> many = new ArrayList<>();
    String pad = "x".repeat(50);
    for (int i = 0; i < 80_000; i++) {
      many.add(TestPlugin.device(pad + i, "Healthy", -1));
    }
    plugin.update(many);
    KubeletEvent e =
        kubelet.awaitEvent(
            ev -> ev.kind() == Kind.LIST_AND_WATCH && ev.outcome() == Outcome.FAILED, WAIT);
    assertThat(e.detail()).contains("4 MiB").contains("RESOURCE_EXHAUSTED");
    List<DeviceState> list =
        kubelet.awaitDevices(RES, l -> l.stream().noneMatch(DeviceState::healthy), WAIT);
    assertThat(list).hasSize(3);
    assertThat(kubelet.registration(RES)).isEmpty();
  }

  @Test
  void cancellingListAndWatchOpensANewStreamOnTheSameConnection() {
    start(Duration.ofMinutes(5));
    int listsBefore = countLists();
    kubelet.cancelListAndWatch(RES);
    kubelet.awaitEvent(e -> e.kind() == Kind.LIST_AND_WATCH_CANCELLED, WAIT);
    Awaitility.await().atMost(WAIT).until(() -> countLists() > listsBefore);
    plugin.update(TestPlugin.healthyDevices(2));
    kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
    assertThat(kubelet.connectedResources()).containsExactly(RES);
    assertThat(kubelet.allocatable(RES)).isEqualTo(2);
    Awaitility.await().atMost(WAIT).until(() -> plugin.openStreams() == 1);
  }

  private int countLists() {
    return (int)
        kubelet.events().stream()
            .filter(e -> e.kind() == Kind.LIST_AND_WATCH && e.outcome() == Outcome.OK)
            .count();
  }

  @Test
  void awaitTimesOutWithTheEventLog() {
    start(Duration.ofMinutes(5));
    assertThatThrownBy(() -> kubelet.awaitRegistration("example.com/never", Duration.ofMillis(50)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining(
            "timed out after 50 ms waiting for a registration of example.com/never")
        .hasMessageContaining("REGISTER example.com/foo OK");
  }
}
