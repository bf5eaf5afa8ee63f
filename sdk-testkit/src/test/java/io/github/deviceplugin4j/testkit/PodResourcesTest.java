package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.podresources.v1.AllocatableResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.AllocatableResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.ContainerDevices;
import io.github.deviceplugin4j.api.podresources.v1.GetPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.ListPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.PodResources;
import io.github.deviceplugin4j.api.podresources.v1.PodResourcesListerGrpc;
import io.github.deviceplugin4j.testkit.plugin.TestDraDriver;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PodResourcesTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String RES = "example.com/foo";

  @TempDir Path dir;

  @Test
  @SuppressWarnings("try") // resources held open for the test's duration
  void answersFromTheAllocations() throws Exception {
    Path socket = dir.resolve("pr/kubelet.sock");
    var group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    try (FakeKubelet kubelet =
            FakeKubelet.builder().pluginDir(dir.resolve("dp")).podResourcesSocket(socket).start();
        TestPlugin plugin =
            new TestPlugin(RES, dir.resolve("dp/foo.sock"))
                .devices(TestPlugin.healthyDevices(4))
                .start()) {
      assertThat(kubelet.podResourcesSocket()).contains(socket);
      plugin.register(kubelet.kubeletSocket());
      kubelet.awaitDevices(RES, l -> l.size() == 4, WAIT);
      kubelet.allocate(PodRequest.count(RES, 2).withPod("ml", "trainer", "uid-1"));
      kubelet.allocate(
          PodRequest.devices(RES, "dev-3").withPod("ml", "trainer", "uid-1").withContainer("side"));
      plugin.update(
          java.util.List.of(
              TestPlugin.device("dev-0", "Healthy", 0),
              TestPlugin.device("dev-1", "Healthy", 1),
              TestPlugin.device("dev-2", "Unhealthy", 0),
              TestPlugin.device("dev-3", "Healthy", -1)));
      kubelet.awaitDevices(RES, l -> !l.get(2).healthy(), WAIT);

      ManagedChannel ch =
          NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
              .channelType(NioDomainSocketChannel.class)
              .eventLoopGroup(group)
              .usePlaintext()
              .overrideAuthority("localhost")
              .withOption(ChannelOption.SO_KEEPALIVE, null)
              .build();
      try {
        var stub =
            PodResourcesListerGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS);

        var list = stub.list(ListPodResourcesRequest.getDefaultInstance());
        assertThat(list.getPodResourcesCount()).isEqualTo(1);
        PodResources pod = list.getPodResources(0);
        assertThat(pod.getName()).isEqualTo("trainer");
        assertThat(pod.getNamespace()).isEqualTo("ml");
        assertThat(pod.getContainersList())
            .extracting(c -> c.getName())
            .containsExactly("main", "side");
        // One entry per device, with its NUMA node, like the kubelet.
        assertThat(pod.getContainers(0).getDevicesList())
            .extracting(d -> d.getResourceName() + ":" + d.getDeviceIds(0) + ":" + numa(d))
            .containsExactly(RES + ":dev-0:0", RES + ":dev-1:1");
        assertThat(pod.getContainers(1).getDevicesList())
            .extracting(d -> d.getDeviceIds(0) + ":" + numa(d))
            .containsExactly("dev-3:none");

        AllocatableResourcesResponse alloc =
            stub.getAllocatableResources(AllocatableResourcesRequest.getDefaultInstance());
        assertThat(alloc.getDevicesList())
            .extracting(d -> d.getDeviceIds(0))
            .containsExactly("dev-0", "dev-1", "dev-3");

        var got =
            stub.get(
                GetPodResourcesRequest.newBuilder()
                    .setPodNamespace("ml")
                    .setPodName("trainer")
                    .build());
        assertThat(got.getPodResources()).isEqualTo(pod);

        assertThatThrownBy(
                () ->
                    stub.get(
                        GetPodResourcesRequest.newBuilder()
                            .setPodNamespace("ml")
                            .setPodName("nope")
                            .build()))
            .isInstanceOfSatisfying(
                StatusRuntimeException.class,
                e -> {
                  assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
                  assertThat(e.getStatus().getDescription())
                      .isEqualTo("pod nope in namespace ml not found");
                });

        kubelet.release("uid-1");
        assertThat(stub.list(ListPodResourcesRequest.getDefaultInstance()).getPodResourcesCount())
            .isZero();
        assertThat(kubelet.events()).anyMatch(e -> e.kind() == KubeletEvent.Kind.POD_RESOURCES);
      } finally {
        ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
      kubelet.close();
      assertThat(socket).doesNotExist();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Test
  @SuppressWarnings("try") // resources held open for the test's duration
  void listsEachContainersPreparedClaimsAsDynamicResourcesUntilTheyAreUnprepared()
      throws Exception {
    Path socket = dir.resolve("pr/kubelet.sock");
    String driverName = "fpga.example.com";
    var group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    try (FakeKubelet kubelet =
            FakeKubelet.builder()
                .pluginDir(dir.resolve("dp"))
                .registryDir(dir.resolve("reg"))
                .podResourcesSocket(socket)
                .start();
        TestDraDriver driver =
            new TestDraDriver(driverName, dir.resolve("p/dra.sock"), dir.resolve("reg/d.sock"))
                .start()) {
      kubelet.dra().awaitRegistration(driverName, WAIT);
      DraClaim shared = new DraClaim("ml", "uid-a", "shared");
      DraClaim own = new DraClaim("ml", "uid-b", "own");
      assertThat(kubelet.dra().prepareResources("pod-uid", driverName, List.of(shared, own)).ok())
          .isTrue();
      // Like GetContainerClaimInfos: a container lists the claims its resources.claims name.
      kubelet
          .dra()
          .podStarted(
              new DraPod(
                  "pod-uid",
                  "ml",
                  "trainer",
                  Map.of("main", List.of("uid-a"), "side", List.of("uid-a", "uid-b"))));

      ManagedChannel ch =
          NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
              .channelType(NioDomainSocketChannel.class)
              .eventLoopGroup(group)
              .usePlaintext()
              .overrideAuthority("localhost")
              .build();
      try {
        var stub =
            PodResourcesListerGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS);
        PodResources pod =
            stub.get(
                    GetPodResourcesRequest.newBuilder()
                        .setPodNamespace("ml")
                        .setPodName("trainer")
                        .build())
                .getPodResources();
        Map<String, List<String>> byContainer = new java.util.TreeMap<>();
        for (var c : pod.getContainersList()) {
          byContainer.put(
              c.getName(),
              c.getDynamicResourcesList().stream()
                  .flatMap(
                      d ->
                          d.getClaimResourcesList().stream()
                              .map(
                                  r ->
                                      d.getClaimNamespace()
                                          + "/"
                                          + d.getClaimName()
                                          + " "
                                          + r.getDriverName()
                                          + " "
                                          + r.getPoolName()
                                          + "/"
                                          + r.getDeviceName()
                                          + " "
                                          + r.getCdiDevicesList().stream()
                                              .map(x -> x.getName())
                                              .toList()))
                  .toList());
        }
        assertThat(byContainer)
            .containsEntry(
                "main",
                List.of("ml/shared fpga.example.com node-a/dev-shared [example.com/dev=shared]"))
            .containsEntry(
                "side",
                List.of(
                    "ml/shared fpga.example.com node-a/dev-shared [example.com/dev=shared]",
                    "ml/own fpga.example.com node-a/dev-own [example.com/dev=own]"));

        assertThat(kubelet.dra().unprepareResources("pod-uid", driverName).ok()).isTrue();
        assertThat(stub.list(ListPodResourcesRequest.getDefaultInstance()).getPodResourcesCount())
            .isZero();
      } finally {
        ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  private static String numa(ContainerDevices d) {
    return d.hasTopology() ? String.valueOf(d.getTopology().getNodes(0).getID()) : "none";
  }
}
