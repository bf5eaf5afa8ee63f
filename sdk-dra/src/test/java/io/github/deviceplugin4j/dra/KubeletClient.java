package io.github.deviceplugin4j.dra;

import io.github.deviceplugin4j.api.dra.v1.Claim;
import io.github.deviceplugin4j.api.dra.v1.DRAPluginGrpc;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesResponse;
import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the kubelet does to a DRA driver, over real Unix sockets with grpc-java. */
final class KubeletClient implements AutoCloseable {

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final List<ManagedChannel> channels = new ArrayList<>();

  ManagedChannel channel(Path socket) {
    ManagedChannel ch =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .build();
    synchronized (channels) {
      channels.add(ch);
    }
    return ch;
  }

  DRAPluginGrpc.DRAPluginBlockingStub v1(Path socket) {
    return DRAPluginGrpc.newBlockingStub(channel(socket)).withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  NodePrepareResourcesResponse prepare(Path socket, Claim... claims) {
    return v1(socket)
        .nodePrepareResources(
            NodePrepareResourcesRequest.newBuilder().addAllClaims(List.of(claims)).build());
  }

  NodeUnprepareResourcesResponse unprepare(Path socket, Claim... claims) {
    return v1(socket)
        .nodeUnprepareResources(
            NodeUnprepareResourcesRequest.newBuilder().addAllClaims(List.of(claims)).build());
  }

  PluginInfo getInfo(Path registrationSocket) {
    return RegistrationGrpc.newBlockingStub(channel(registrationSocket))
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .getInfo(InfoRequest.getDefaultInstance());
  }

  static Claim claim(String uid) {
    return Claim.newBuilder().setNamespace("default").setName("claim-" + uid).setUid(uid).build();
  }

  @Override
  public void close() {
    synchronized (channels) {
      channels.forEach(ManagedChannel::shutdownNow);
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
