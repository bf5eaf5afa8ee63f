package io.github.deviceplugin4j.core.podresources;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.podresources.v1.GetPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.GetPodResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.ListPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.ListPodResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.PodResourcesListerGrpc;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.PodRequest;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PodResourcesClientTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;

  private static DeviceBackend backend(String resource, int numa, String... ids) {
    return new DeviceBackend() {
      @Override
      public String resourceName() {
        return resource;
      }

      @Override
      public List<Device> devices() {
        return java.util.Arrays.stream(ids)
            .map(id -> Device.builder(id).numaNode(numa).build())
            .toList();
      }
    };
  }

  @Test
  void findsPodsAllocatableDevicesAndTheOwnerOfADevice() {
    Path podResources = tmp.resolve("pr.sock");
    try (FakeKubelet kubelet =
            FakeKubelet.builder()
                .pluginDir(tmp.resolve("dp"))
                .podResourcesSocket(podResources)
                .start();
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(tmp.resolve("dp"))
                .registrationMode(RegistrationMode.LEGACY)
                .backend(backend("example.com/fpga", 1, "port0", "port1", "port2"))
                .start();
        PodResourcesClient client = PodResourcesClient.connect(podResources)) {
      kubelet.awaitDevices("example.com/fpga", d -> d.size() == 3, WAIT);
      kubelet.allocate(
          PodRequest.devices("example.com/fpga", "port1")
              .withPod("team-a", "trainer", "uid-1")
              .withContainer("worker"));

      List<PodResources> pods = client.list();
      assertThat(pods).hasSize(1);
      PodResources pod = pods.get(0);
      assertThat(pod.namespace()).isEqualTo("team-a");
      assertThat(pod.name()).isEqualTo("trainer");
      assertThat(pod.containers()).hasSize(1);
      ContainerResources c = pod.containers().get(0);
      assertThat(c.name()).isEqualTo("worker");
      assertThat(c.devices())
          .containsExactly(new ContainerDevices("example.com/fpga", List.of("port1"), List.of(1L)));

      assertThat(client.ownerOf("example.com/fpga", "port1"))
          .contains(new DeviceOwner("team-a", "trainer", "worker"));
      assertThat(client.ownerOf("example.com/fpga", "port0")).isEmpty();
      assertThat(client.ownerOf("example.com/other", "port1")).isEmpty();

      assertThat(client.get("team-a", "trainer")).contains(pod);
      assertThat(client.get("team-a", "nobody")).isEmpty();
      assertThat(client.usesListForGet()).as("the fake kubelet serves Get").isFalse();
      assertThat(client.ownerOf("example.com/fpga", "port1", "team-a", "trainer"))
          .contains(new DeviceOwner("team-a", "trainer", "worker"));
      assertThat(client.ownerOf("example.com/fpga", "port0", "team-a", "trainer")).isEmpty();
      assertThat(client.ownerOf("example.com/fpga", "port1", "team-a", "nobody")).isEmpty();

      assertThat(client.allocatable())
          .flatExtracting(ContainerDevices::deviceIds)
          .contains("port0", "port1", "port2");
      assertThat(host.isReady()).isTrue();
    }
  }

  /**
   * A kubelet's PodResources service without a working {@code Get}: older than 1.27 (gRPC's
   * UNIMPLEMENTED) or with the feature gate off (UNKNOWN "PodResources API Get method disabled",
   * the kubelet's text), answering {@code List} with a given response.
   */
  static final class OldKubelet extends PodResourcesListerGrpc.PodResourcesListerImplBase
      implements AutoCloseable {
    final AtomicInteger lists = new AtomicInteger();
    final AtomicInteger gets = new AtomicInteger();
    private final ListPodResourcesResponse listResponse;
    private final Status getStatus;
    private final EventLoopGroup group =
        new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Server server;

    OldKubelet(Path socket, ListPodResourcesResponse listResponse, Status getStatus)
        throws IOException {
      this.listResponse = listResponse;
      this.getStatus = getStatus;
      server =
          NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket))
              .channelType(NioServerDomainSocketChannel.class)
              .bossEventLoopGroup(group)
              .workerEventLoopGroup(group)
              .withChildOption(ChannelOption.SO_KEEPALIVE, null)
              .maxInboundMessageSize(64 * 1024 * 1024)
              .addService(this)
              .build()
              .start();
    }

    @Override
    public void list(
        ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
      lists.incrementAndGet();
      response.onNext(listResponse);
      response.onCompleted();
    }

    @Override
    public void get(GetPodResourcesRequest request, StreamObserver<GetPodResourcesResponse> out) {
      gets.incrementAndGet();
      out.onError(getStatus.asRuntimeException());
    }

    @Override
    public void close() throws InterruptedException {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  private static ListPodResourcesResponse pods(int devicesPerPod, String... names) {
    ListPodResourcesResponse.Builder b = ListPodResourcesResponse.newBuilder();
    for (String name : names) {
      var devices =
          io.github.deviceplugin4j.api.podresources.v1.ContainerDevices.newBuilder()
              .setResourceName("example.com/fpga");
      for (int i = 0; i < devicesPerPod; i++) {
        devices.addDeviceIds(name + "-device-" + "x".repeat(40) + "-" + i);
      }
      b.addPodResources(
          io.github.deviceplugin4j.api.podresources.v1.PodResources.newBuilder()
              .setNamespace("team-a")
              .setName(name)
              .addContainers(
                  io.github.deviceplugin4j.api.podresources.v1.ContainerResources.newBuilder()
                      .setName("worker")
                      .addDevices(devices)));
    }
    return b.build();
  }

  static Stream<Arguments> kubeletsWithoutGet() {
    return Stream.of(
        Arguments.of("before 1.27", Status.UNIMPLEMENTED.withDescription("unknown method Get")),
        Arguments.of(
            "feature gate off",
            Status.UNKNOWN.withDescription("PodResources API Get method disabled")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kubeletsWithoutGet")
  void get_fallsBackToListWhereTheKubeletHasNoGet(String name, Status getStatus) throws Exception {
    Path socket = tmp.resolve("old.sock");
    try (OldKubelet kubelet = new OldKubelet(socket, pods(1, "trainer", "other"), getStatus);
        PodResourcesClient client = PodResourcesClient.connect(socket)) {
      assertThat(client.get("team-a", "trainer")).map(PodResources::name).contains("trainer");
      assertThat(client.usesListForGet()).isTrue();
      assertThat(client.get("team-a", "nobody")).isEmpty();
      assertThat(
              client.ownerOf(
                  "example.com/fpga", "other-device-" + "x".repeat(40) + "-0", "team-a", "other"))
          .contains(new DeviceOwner("team-a", "other", "worker"));
      assertThat(kubelet.gets.get()).as("Get is asked once, then List directly").isEqualTo(1);
      assertThat(kubelet.lists.get()).isEqualTo(3);
    }
  }

  @Test
  void list_acceptsALargeNodesResponseOverGrpcsDefaultFourMebibytes() throws Exception {
    Path socket = tmp.resolve("big.sock");
    ListPodResourcesResponse big = pods(25_000, "a", "b", "c", "d");
    assertThat(big.getSerializedSize()).isGreaterThan(4 * 1024 * 1024);
    try (OldKubelet kubelet = new OldKubelet(socket, big, Status.UNIMPLEMENTED);
        PodResourcesClient client = PodResourcesClient.connect(socket)) {
      assertThat(client.list()).hasSize(4);
    }
  }

  @Test
  void list_aResponseOverAConfiguredLimitIsAClearError() throws Exception {
    Path socket = tmp.resolve("big.sock");
    ListPodResourcesResponse big = pods(10_000, "a");
    try (OldKubelet kubelet = new OldKubelet(socket, big, Status.UNIMPLEMENTED);
        PodResourcesClient client =
            PodResourcesClient.connect(socket, Duration.ofSeconds(10), 64 * 1024)) {
      assertThatThrownBy(client::list)
          .isInstanceOfSatisfying(
              PodResourcesException.class,
              e -> {
                assertThat(e.code()).isEqualTo("RESOURCE_EXHAUSTED");
                assertThat(e.getMessage())
                    .contains("over this client's limit of 65536 bytes")
                    .contains("connect with a larger maxMessageBytes");
              });
    }
  }

  @Test
  void anAbsentSocketIsAClearError() {
    Path missing = tmp.resolve("missing.sock");
    try (PodResourcesClient client = PodResourcesClient.connect(missing, Duration.ofSeconds(2))) {
      assertThatThrownBy(client::list)
          .isInstanceOfSatisfying(
              PodResourcesException.class,
              e -> {
                assertThat(e.code()).isEqualTo("UNAVAILABLE");
                assertThat(e.getMessage())
                    .contains("PodResources List on " + missing)
                    .contains("the socket does not exist");
              });
    }
  }
}
