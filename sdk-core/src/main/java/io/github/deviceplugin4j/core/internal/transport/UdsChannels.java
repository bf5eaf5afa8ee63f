package io.github.deviceplugin4j.core.internal.transport;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The SDK's gRPC clients on a Unix socket (the legacy {@code Register} call, the socket warm-up):
 * grpc-java's Netty channel on the host's event loop, plaintext, with the direct executor (the
 * callers never block in a callback), and calls whose messages are bytes the API version's adapter
 * encoded.
 */
public final class UdsChannels {

  private UdsChannels() {}

  /** A channel to one socket, on {@code group}. It connects at its first call; shut it down. */
  public static ManagedChannel open(Path socket, EventLoopGroup group) {
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
   * Starts one unary call of encoded bytes, e.g. {@code v1beta1.Registration/Register}; {@code
   * result} completes with the encoded answer, or fails with a {@link
   * io.grpc.StatusRuntimeException}, on the event loop, so its stages must not block.
   */
  public static ClientCall<byte[], byte[]> start(
      ManagedChannel channel,
      String method,
      byte[] request,
      long deadlineNanos,
      CompletableFuture<byte[]> result) {
    ClientCall<byte[], byte[]> call =
        channel.newCall(
            MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(method)
                .setRequestMarshaller(BYTES)
                .setResponseMarshaller(BYTES)
                .build(),
            CallOptions.DEFAULT.withDeadlineAfter(deadlineNanos, TimeUnit.NANOSECONDS));
    call.start(
        new ClientCall.Listener<>() {
          private byte[] response;

          @Override
          public void onMessage(byte[] message) {
            response = message;
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            if (status.isOk()) {
              result.complete(response);
            } else {
              result.completeExceptionally(status.asRuntimeException(trailers));
            }
          }
        },
        new Metadata());
    call.sendMessage(request);
    call.halfClose();
    call.request(2);
    return call;
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
