package io.github.deviceplugin4j.core.internal.transport;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ServerCalls;
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
            bytesMethod(MethodDescriptor.MethodType.UNARY, method),
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

  /**
   * Starts one server-streaming call of encoded bytes, e.g. {@code
   * v1beta1.DevicePlugin/ListAndWatch}, and cancels it once its first message arrived, as a kubelet
   * that only wants the first device list would: {@code first} completes with that message, or
   * fails with a {@link io.grpc.StatusRuntimeException} when the call ends before one, on the event
   * loop.
   */
  public static ClientCall<byte[], byte[]> firstMessage(
      ManagedChannel channel,
      String method,
      byte[] request,
      long deadlineNanos,
      CompletableFuture<byte[]> first) {
    ClientCall<byte[], byte[]> call =
        channel.newCall(
            bytesMethod(MethodDescriptor.MethodType.SERVER_STREAMING, method),
            CallOptions.DEFAULT.withDeadlineAfter(deadlineNanos, TimeUnit.NANOSECONDS));
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(byte[] message) {
            if (first.complete(message)) {
              call.cancel("the first message is all this call wanted", null);
            }
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            first.completeExceptionally(
                (status.isOk() ? Status.INTERNAL.withDescription("no message") : status)
                    .asRuntimeException(trailers));
          }
        },
        new Metadata());
    call.sendMessage(request);
    call.halfClose();
    call.request(1);
    return call;
  }

  /**
   * A unary method of encoded bytes, as a server serves it: {@code handler} answers each request
   * with the encoded response, or fails it with a {@link io.grpc.StatusRuntimeException}.
   */
  public static ServerServiceDefinition unaryService(
      String method, java.util.function.Function<byte[], CompletableFuture<byte[]>> handler) {
    MethodDescriptor<byte[], byte[]> descriptor =
        bytesMethod(MethodDescriptor.MethodType.UNARY, method);
    return ServerServiceDefinition.builder(MethodDescriptor.extractFullServiceName(method))
        .addMethod(
            descriptor,
            ServerCalls.asyncUnaryCall(
                (request, answer) ->
                    handler
                        .apply(request)
                        .whenComplete(
                            (response, error) -> {
                              if (error == null) {
                                answer.onNext(response);
                                answer.onCompleted();
                              } else {
                                answer.onError(Status.fromThrowable(error).asRuntimeException());
                              }
                            })))
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

  /** A method of the given type whose messages are their encoded bytes. */
  private static MethodDescriptor<byte[], byte[]> bytesMethod(
      MethodDescriptor.MethodType type, String method) {
    return MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(type)
        .setFullMethodName(method)
        .setRequestMarshaller(BYTES)
        .setResponseMarshaller(BYTES)
        .build();
  }
}
