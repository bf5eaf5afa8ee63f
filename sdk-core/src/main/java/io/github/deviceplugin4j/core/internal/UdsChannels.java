package io.github.deviceplugin4j.core.internal;

import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;

/**
 * The SDK's gRPC clients on a Unix socket (the legacy {@code Register} call, the socket warm-up):
 * grpc-java's Netty channel on the host's event loop, plaintext, with the direct executor (the
 * callers never block in a callback), and calls whose messages are bytes the API version's adapter
 * encoded.
 */
final class UdsChannels {

  private UdsChannels() {}

  /**
   * A channel to one socket. It connects at its first call; shut it down when done.
   *
   * @param socket the socket file
   * @param group the event loop group the connection runs on
   * @return the channel
   */
  static ManagedChannel open(Path socket, EventLoopGroup group) {
    TransportLogs.install();
    return NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
        .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
        .eventLoopGroup(group)
        .directExecutor()
        .usePlaintext()
        .disableRetry()
        .maxInboundMessageSize(TransportLimits.MAX_INBOUND_MESSAGE_BYTES)
        .maxInboundMetadataSize(TransportLimits.MAX_INBOUND_METADATA_BYTES)
        // Unix sockets do not know SO_KEEPALIVE, which grpc-netty sets; null removes it.
        .withOption(ChannelOption.SO_KEEPALIVE, null)
        .build();
  }

  /**
   * A unary method whose request and response are a message's encoded bytes.
   *
   * @param fullMethodName e.g. {@code v1beta1.Registration/Register}
   * @return the descriptor
   */
  static MethodDescriptor<byte[], byte[]> unary(String fullMethodName) {
    return MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(fullMethodName)
        .setRequestMarshaller(BYTES)
        .setResponseMarshaller(BYTES)
        .build();
  }

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try (stream) {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };
}
