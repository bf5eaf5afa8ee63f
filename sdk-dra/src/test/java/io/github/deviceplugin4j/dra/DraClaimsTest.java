package io.github.deviceplugin4j.dra;

import static io.github.deviceplugin4j.dra.KubeletClient.claim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.dra.v1.Device;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesResponse;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.dra.internal.ClaimCheckpoint;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Prepare and unprepare as the kubelet sees them, over the driver's real Unix socket. */
class DraClaimsTest {
  // Threads of their own for the kubelet's concurrent calls: CompletableFuture's default
  // executor ran them one at a time on JDK 25 with 2 cores (a call waiting at a gate then kept
  // the next from being made at all).
  private final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void stopCallers() {
    callers.shutdownNow();
  }

  @TempDir Path tmp;
  private Path plugins;
  private Path registry;
  private final KubeletClient kubelet = new KubeletClient();
  private RecordingDriver driver;
  private DraPluginHost host;

  @BeforeEach
  void start() {
    plugins = tmp.resolve("p");
    registry = tmp.resolve("r");
    driver = new RecordingDriver();
    host = start(driver);
  }

  private DraPluginHost start(DraDriver d) {
    return DraPluginHost.builder("gpu.example.com", d)
        .pluginDir(plugins)
        .registryDir(registry)
        .start();
  }

  @AfterEach
  void stop() {
    kubelet.close();
    host.close();
  }

  @Test
  void everyClaimGetsItsOwnEntryAndOneClaimsProblemNeverFailsTheCall() {
    NodePrepareResourcesResponse response =
        kubelet.prepare(
            host.draSocket(),
            claim("good"),
            claim("fail-1"),
            claim("throw-1"),
            claim("").toBuilder().setName("no-uid").build());

    assertThat(response.getClaimsMap()).containsOnlyKeys("good", "fail-1", "throw-1", "");
    assertThat(response.getClaimsOrThrow("good").getError()).isEmpty();
    assertThat(response.getClaimsOrThrow("good").getDevicesList())
        .containsExactly(
            Device.newBuilder()
                .addRequestNames("gpu")
                .setPoolName("node-1")
                .setDeviceName("dev-good")
                .addCdiDeviceIds("example.com/gpu=good")
                .build());
    assertThat(response.getClaimsOrThrow("fail-1").getError())
        .contains("default/claim-fail-1 (fail-1)")
        .contains("no device free");
    assertThat(response.getClaimsOrThrow("throw-1").getError()).contains("vendor library crashed");
    assertThat(response.getClaimsOrThrow("").getError()).contains("no-uid").contains("has no uid");
    assertThat(driver.prepared).containsExactly("good", "fail-1", "throw-1");
  }

  @Test
  void aRepeatedPrepareIsAnsweredFromTheRecordWithoutCallingTheDriverAgain() {
    NodePrepareResourcesResponse first = kubelet.prepare(host.draSocket(), claim("a"));
    NodePrepareResourcesResponse again = kubelet.prepare(host.draSocket(), claim("a"));

    assertThat(again).isEqualTo(first);
    assertThat(driver.prepared).containsExactly("a");
  }

  @Test
  void aFailedClaimIsTriedAgainWhenTheKubeletAsksAgain() {
    kubelet.prepare(host.draSocket(), claim("fail-x"));
    kubelet.prepare(host.draSocket(), claim("fail-x"));

    assertThat(driver.prepared).containsExactly("fail-x", "fail-x");
    assertThat(host.preparedClaims()).isEmpty();
  }

  @Test
  void unprepareOfAClaimNobodyPreparedSucceedsWithoutCallingTheDriver() {
    NodeUnprepareResourcesResponse response = kubelet.unprepare(host.draSocket(), claim("ghost"));

    assertThat(response.getClaimsMap()).containsOnlyKeys("ghost");
    assertThat(response.getClaimsOrThrow("ghost").getError()).isEmpty();
    assertThat(driver.unprepared).isEmpty();
  }

  @Test
  void unprepareHandsTheDriverTheDevicesItPreparedAndForgetsTheClaim() {
    kubelet.prepare(host.draSocket(), claim("a"), claim("b"));

    NodeUnprepareResourcesResponse response =
        kubelet.unprepare(host.draSocket(), claim("a"), claim("b"));
    kubelet.unprepare(host.draSocket(), claim("a"));

    assertThat(response.getClaimsMap()).containsOnlyKeys("a", "b");
    assertThat(response.getClaimsMap().values())
        .allSatisfy(r -> assertThat(r.getError()).isEmpty());
    assertThat(driver.unprepared).containsExactly("a", "b");
    assertThat(driver.unpreparedDevices.get("a"))
        .containsExactly(
            new PreparedDevice(
                List.of("gpu/small"), "node-1", "dev-a", List.of("example.com/gpu=a")));
    assertThat(host.preparedClaims()).isEmpty();
  }

  @Test
  void aFailedUnprepareKeepsTheClaimPreparedSoTheKubeletCanRetry() {
    kubelet.prepare(host.draSocket(), claim("a"));
    driver.failUnprepare = true;

    NodeUnprepareResourcesResponse failed = kubelet.unprepare(host.draSocket(), claim("a"));
    driver.failUnprepare = false;
    NodeUnprepareResourcesResponse retried = kubelet.unprepare(host.draSocket(), claim("a"));

    assertThat(failed.getClaimsOrThrow("a").getError()).contains("device busy");
    assertThat(retried.getClaimsOrThrow("a").getError()).isEmpty();
    assertThat(driver.unprepared).containsExactly("a", "a");
    assertThat(host.preparedClaims()).isEmpty();
  }

  @Test
  void v1beta1CallsReachTheSameClaimsAsV1() {
    kubelet.prepare(host.draSocket(), claim("a"));

    var beta =
        io.github.deviceplugin4j.api.dra.v1beta1.DRAPluginGrpc.newBlockingStub(
                kubelet.channel(host.draSocket()))
            .nodePrepareResources(
                io.github.deviceplugin4j.api.dra.v1beta1.NodePrepareResourcesRequest.newBuilder()
                    .addClaims(
                        io.github.deviceplugin4j.api.dra.v1beta1.Claim.newBuilder()
                            .setNamespace("default")
                            .setName("claim-a")
                            .setUid("a"))
                    .build());

    assertThat(beta.getClaimsOrThrow("a").getDevices(0).getDeviceName()).isEqualTo("dev-a");
    assertThat(driver.prepared).containsExactly("a");
  }

  @Test
  void aRestartedHostUnpreparesWhatTheEarlierInstancePrepared() {
    kubelet.prepare(host.draSocket(), claim("a"));
    host.close();

    RecordingDriver second = new RecordingDriver();
    host = start(second);
    NodePrepareResourcesResponse repeated = kubelet.prepare(host.draSocket(), claim("a"));
    NodeUnprepareResourcesResponse unprepared = kubelet.unprepare(host.draSocket(), claim("a"));

    assertThat(repeated.getClaimsOrThrow("a").getDevices(0).getDeviceName()).isEqualTo("dev-a");
    assertThat(second.prepared).isEmpty();
    assertThat(unprepared.getClaimsOrThrow("a").getError()).isEmpty();
    assertThat(second.unprepared).containsExactly("a");
    assertThat(second.unpreparedDevices.get("a").get(0).deviceName()).isEqualTo("dev-a");
  }

  @Test
  void aCorruptCheckpointStopsTheStartNamingTheFileAndWhatToDo() throws IOException {
    kubelet.prepare(host.draSocket(), claim("a"));
    host.close();
    Path file = plugins.resolve(ClaimCheckpoint.FILE_NAME);
    Files.writeString(file, Files.readString(file).replace("dev-a", "dev-b"));

    assertThatThrownBy(() -> start(new RecordingDriver()))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("checksum")
        .hasMessageContaining("restore it from a backup");
  }

  @Test
  void callsOfOneHostRunOneAtATime() throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    driver.gate = gate;
    List<CompletableFuture<NodePrepareResourcesResponse>> calls =
        List.of("a", "b", "c", "d").stream()
            .map(
                uid ->
                    CompletableFuture.supplyAsync(
                        () -> kubelet.prepare(host.draSocket(), claim(uid)), callers))
            .toList();
    await().atMost(Duration.ofSeconds(20)).until(() -> driver.prepared.size() == 1);

    gate.countDown();
    CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get();

    assertThat(driver.prepared).containsExactlyInAnyOrder("a", "b", "c", "d");
    assertThat(driver.maxInFlight.get()).isEqualTo(1);
  }
}
