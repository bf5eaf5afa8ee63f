package io.github.deviceplugin4j.core;

import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A plain gRPC client of a plugin's DevicePlugin service, for tests that send requests the kubelet
 * never would (empty, repeated IDs, several containers). Not a fake kubelet.
 */
final class PluginClient implements AutoCloseable {

  private final EventLoopGroup group;
  private final ManagedChannel channel;

  private PluginClient(Path socket) {
    group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    channel =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(group)
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .usePlaintext()
            .build();
  }

  static PluginClient connect(Path socket) {
    return new PluginClient(socket);
  }

  DevicePluginGrpc.DevicePluginBlockingStub blocking() {
    return DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  DevicePluginGrpc.DevicePluginStub async() {
    return DevicePluginGrpc.newStub(channel);
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow();
    channel.awaitTermination(5, TimeUnit.SECONDS);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }
}
