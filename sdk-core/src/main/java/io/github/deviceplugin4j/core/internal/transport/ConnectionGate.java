package io.github.deviceplugin4j.core.internal.transport;

import io.github.deviceplugin4j.core.internal.RateLimitedLog;
import io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.InternalProtocolNegotiators;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AsciiString;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits at most {@link TransportLimits#MAX_CONNECTIONS_PER_SOCKET} connections at once to one
 * server: a connection over the limit is closed as soon as it is accepted, before anything is read
 * from it. Admitted connections go on to gRPC's plaintext negotiation as usual.
 *
 * <p>It is gRPC's protocol negotiator, the one place where grpc-java lets a server add a handler to
 * each accepted connection; a negotiator per server, so each socket counts its own connections.
 */
final class ConnectionGate implements InternalProtocolNegotiator.ProtocolNegotiator {

  private static final Logger LOG = LoggerFactory.getLogger("io.github.deviceplugin4j.transport");

  private final InternalProtocolNegotiator.ProtocolNegotiator plaintext =
      InternalProtocolNegotiators.serverPlaintext();
  private final AtomicInteger open = new AtomicInteger();
  private final int limit;
  private final String dir;
  private final RateLimitedLog refusals;

  /** {@code dir} is the directory of the server's socket, for the log. */
  ConnectionGate(int limit, String dir) {
    this.limit = limit;
    this.dir = dir;
    this.refusals = new RateLimitedLog(LOG, TransportLimits.LOG_PERIOD);
  }

  @Override
  public AsciiString scheme() {
    return plaintext.scheme();
  }

  @Override
  public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
    return new Admit(plaintext.newHandler(grpcHandler));
  }

  @Override
  public void close() {
    plaintext.close();
  }

  /** Counts a connection in, or closes it; then steps aside for gRPC's own negotiation. */
  private final class Admit extends ChannelInboundHandlerAdapter {
    private final ChannelHandler next;

    Admit(ChannelHandler next) {
      this.next = next;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      if (open.incrementAndGet() > limit) {
        open.decrementAndGet();
        refusals.warn(
            "Refused a connection to a socket in "
                + dir
                + ": "
                + limit
                + " connections are open already (a client that opens connections and leaves"
                + " them idle? see \"Transport limits\" in docs/operations.md)",
            null);
        ctx.channel().close();
        return;
      }
      ctx.channel().closeFuture().addListener(f -> open.decrementAndGet());
      ctx.pipeline().replace(this, null, next);
    }
  }
}
