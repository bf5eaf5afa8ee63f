package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.drahealth.v1.DRAResourceHealthGrpc;
import io.github.deviceplugin4j.api.drahealth.v1.DeviceHealth;
import io.github.deviceplugin4j.api.drahealth.v1.HealthStatus;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kubelet's health watch on the driver's socket. */
class DraHealthTest {

  @TempDir Path tmp;

  /** A driver with health: tests publish through the sink it was given. */
  static final class HealthyDriver extends RecordingDriver implements DraHealthReporter {
    final AtomicReference<DraHealthSink> sink = new AtomicReference<>();

    @Override
    public void startHealth(DraHealthSink s) {
      sink.set(s);
      s.publish(List.of(DraDeviceHealth.healthy("node-1", "gpu-0")));
    }
  }

  private DraPluginHost start(DraDriver driver, Duration resend) {
    DraPluginHost.Builder b =
        DraPluginHost.builder("gpu.example.com", driver)
            .pluginDir(tmp.resolve("p"))
            .registryDir(tmp.resolve("r"));
    if (resend != null) {
      b.healthResendInterval(resend);
    }
    return b.start();
  }

  @Test
  void aWatchGetsTheFullListAtOnceAndThenEveryChange() {
    HealthyDriver driver = new HealthyDriver();
    try (DraPluginHost host = start(driver, null);
        KubeletClient kubelet = new KubeletClient()) {
      Iterator<NodeWatchResourcesResponse> stream =
          DRAResourceHealthGrpc.newBlockingStub(kubelet.channel(host.draSocket()))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance());

      NodeWatchResourcesResponse first = stream.next();
      driver
          .sink
          .get()
          .publish(
              List.of(
                  new DraDeviceHealth(
                      "node-1",
                      "gpu-0",
                      DraHealthStatus.UNHEALTHY,
                      "ECC errors",
                      Instant.ofEpochSecond(1_700_000_000),
                      Duration.ofSeconds(40))));
      NodeWatchResourcesResponse change = stream.next();

      assertThat(first.getDevicesList())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.getDevice().getPoolName()).isEqualTo("node-1");
                assertThat(d.getDevice().getDeviceName()).isEqualTo("gpu-0");
                assertThat(d.getHealth()).isEqualTo(HealthStatus.HEALTHY);
              });
      assertThat(change.getDevicesList())
          .containsExactly(
              DeviceHealth.newBuilder()
                  .setDevice(
                      io.github.deviceplugin4j.api.drahealth.v1.DeviceIdentifier.newBuilder()
                          .setPoolName("node-1")
                          .setDeviceName("gpu-0"))
                  .setHealth(HealthStatus.UNHEALTHY)
                  .setMessage("ECC errors")
                  .setLastUpdatedTime(1_700_000_000)
                  .setHealthCheckTimeoutSeconds(40)
                  .build());
    }
  }

  @Test
  void theLastListIsSentAgainBeforeTheKubeletStopsTrustingIt() {
    HealthyDriver driver = new HealthyDriver();
    try (DraPluginHost host = start(driver, Duration.ofMillis(50));
        KubeletClient kubelet = new KubeletClient()) {
      Iterator<NodeWatchResourcesResponse> stream =
          DRAResourceHealthGrpc.newBlockingStub(kubelet.channel(host.draSocket()))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance());

      NodeWatchResourcesResponse first = stream.next();
      NodeWatchResourcesResponse resent = stream.next();

      assertThat(resent).isEqualTo(first);
    }
  }

  @Test
  void kubeletsThatOnlyKnowV1alpha1GetTheSameHealth() {
    HealthyDriver driver = new HealthyDriver();
    try (DraPluginHost host = start(driver, null);
        KubeletClient kubelet = new KubeletClient()) {
      var stream =
          io.github.deviceplugin4j.api.drahealth.v1alpha1.DRAResourceHealthGrpc.newBlockingStub(
                  kubelet.channel(host.draSocket()))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .nodeWatchResources(
                  io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesRequest
                      .getDefaultInstance());

      var first = stream.next();

      assertThat(first.getDevices(0).getDevice().getDeviceName()).isEqualTo("gpu-0");
      assertThat(first.getDevices(0).getHealth())
          .isEqualTo(io.github.deviceplugin4j.api.drahealth.v1alpha1.HealthStatus.HEALTHY);
    }
  }

  @Test
  void aDriverWithoutHealthAnswersUnimplementedSoTheKubeletStopsAsking() {
    try (DraPluginHost host = start(new RecordingDriver(), null);
        KubeletClient kubelet = new KubeletClient()) {
      Iterator<NodeWatchResourcesResponse> stream =
          DRAResourceHealthGrpc.newBlockingStub(kubelet.channel(host.draSocket()))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance());

      assertThatThrownBy(stream::next)
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
    }
  }
}
