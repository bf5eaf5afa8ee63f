package io.github.deviceplugin4j.examples.demo;

import io.github.deviceplugin4j.api.dra.v1.Claim;
import io.github.deviceplugin4j.api.dra.v1.DRAPluginGrpc;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesResponse;
import io.github.deviceplugin4j.api.drahealth.v1.DRAResourceHealthGrpc;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesResponse;
import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's side of a DRA driver, as the demo needs it: read the registration, prepare and
 * unprepare claims, watch device health; grpc-java over the driver's Unix sockets.
 *
 * <p>A stand-in until the fake kubelet of {@code deviceplugin4j-testkit} has its DRA side: the demo
 * calls only these four methods, so switching means replacing this class with the fake kubelet's
 * (which also validates the registration and picks the service the way the kubelet does).
 */
final class DraKubelet implements AutoCloseable {
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final List<ManagedChannel> channels = new ArrayList<>();

  private ManagedChannel channel(Path socket) {
    ManagedChannel ch =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .build();
    channels.add(ch);
    return ch;
  }

  /** What the kubelet's plugin watcher reads from a registration socket. */
  PluginInfo getInfo(Path registrationSocket) {
    return RegistrationGrpc.newBlockingStub(channel(registrationSocket))
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .getInfo(InfoRequest.getDefaultInstance());
  }

  /** NodePrepareResources (v1) for the claims of one pod. */
  NodePrepareResourcesResponse prepare(Path draSocket, Claim... claims) {
    return DRAPluginGrpc.newBlockingStub(channel(draSocket))
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .nodePrepareResources(
            NodePrepareResourcesRequest.newBuilder().addAllClaims(List.of(claims)).build());
  }

  /** NodeUnprepareResources (v1) for the claims of one pod. */
  NodeUnprepareResourcesResponse unprepare(Path draSocket, Claim... claims) {
    return DRAPluginGrpc.newBlockingStub(channel(draSocket))
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .nodeUnprepareResources(
            NodeUnprepareResourcesRequest.newBuilder().addAllClaims(List.of(claims)).build());
  }

  /** Opens the health stream (v1); every message the driver sends lands in the queue. */
  BlockingQueue<NodeWatchResourcesResponse> watchHealth(Path draSocket) {
    BlockingQueue<NodeWatchResourcesResponse> queue = new LinkedBlockingQueue<>();
    DRAResourceHealthGrpc.newStub(channel(draSocket))
        .nodeWatchResources(
            NodeWatchResourcesRequest.getDefaultInstance(),
            new StreamObserver<>() {
              @Override
              public void onNext(NodeWatchResourcesResponse value) {
                queue.add(value);
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            });
    return queue;
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
