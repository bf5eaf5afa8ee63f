package io.github.deviceplugin4j.reliability;

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
 * A plain gRPC client of a plugin's DevicePlugin service over its Unix socket: sends what a kubelet
 * would not (bad input) or faster than the fake kubelet's serialised allocation path. Not a
 * kubelet.
 */
final class RawClient implements AutoCloseable {

  private final EventLoopGroup group;
  private final ManagedChannel channel;

  private RawClient(Path socket, int ioThreads) {
    group = new MultiThreadIoEventLoopGroup(ioThreads, NioIoHandler.newFactory());
    channel =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(group)
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .usePlaintext()
            // Long error descriptions must not be cut by the client (the kubelet allows 16 MiB).
            .maxInboundMetadataSize(16 * 1024 * 1024)
            .build();
  }

  static RawClient connect(Path socket) {
    return new RawClient(socket, 1);
  }

  static RawClient connect(Path socket, int ioThreads) {
    return new RawClient(socket, ioThreads);
  }

  /**
   * A blocking stub with a 10 s deadline per call, so a hanging plugin fails instead of hanging.
   */
  DevicePluginGrpc.DevicePluginBlockingStub blocking() {
    return DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  DevicePluginGrpc.DevicePluginStub async() {
    return DevicePluginGrpc.newStub(channel);
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
