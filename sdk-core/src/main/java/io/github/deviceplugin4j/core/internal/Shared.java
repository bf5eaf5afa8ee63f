package io.github.deviceplugin4j.core.internal;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What every resource of one host shares: one event loop group, one worker pool, one timer.
 *
 * @param config the configuration
 * @param group the event loop group of every server and channel
 * @param workers vendor code that may block (request path, discovery), engine tasks, and the
 *     executor of the client channels; the servers run their calls on the event loop
 * @param timer deadlines, retries, safety checks
 * @param listeners the vendor's listeners
 * @param observers the vendor's observers
 */
public record Shared(
    EngineConfig config,
    EventLoopGroup group,
    ExecutorService workers,
    ScheduledExecutorService timer,
    Listeners listeners,
    Observers observers) {

  /**
   * A plaintext gRPC channel to a Unix socket on the shared event loop group.
   *
   * @param socket the socket file
   * @return the channel; shut it down after use
   */
  public ManagedChannel channel(Path socket) {
    return NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
        .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
        .eventLoopGroup(group)
        .executor(workers)
        .offloadExecutor(workers)
        .usePlaintext()
        // grpc-netty sets SO_KEEPALIVE, unknown to Unix sockets (Netty would warn); null removes
        // it.
        .withOption(ChannelOption.SO_KEEPALIVE, null)
        .build();
  }
}
