package io.github.deviceplugin4j.core.internal;

import static io.github.deviceplugin4j.core.internal.Http2Frames.ACK;
import static io.github.deviceplugin4j.core.internal.Http2Frames.DATA;
import static io.github.deviceplugin4j.core.internal.Http2Frames.END_HEADERS;
import static io.github.deviceplugin4j.core.internal.Http2Frames.END_STREAM;
import static io.github.deviceplugin4j.core.internal.Http2Frames.GOAWAY;
import static io.github.deviceplugin4j.core.internal.Http2Frames.HEADER;
import static io.github.deviceplugin4j.core.internal.Http2Frames.HEADERS;
import static io.github.deviceplugin4j.core.internal.Http2Frames.MAX_FRAME;
import static io.github.deviceplugin4j.core.internal.Http2Frames.PING;
import static io.github.deviceplugin4j.core.internal.Http2Frames.PREFACE;
import static io.github.deviceplugin4j.core.internal.Http2Frames.RST_STREAM;
import static io.github.deviceplugin4j.core.internal.Http2Frames.SETTINGS;
import static io.github.deviceplugin4j.core.internal.Http2Frames.WINDOW_UPDATE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersEncoder;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Unary gRPC calls made one after another on one connection: the socket warm-up's client. Each call
 * goes the way a kubelet's call does on its long-lived connection (one write of its frames, the
 * server's loop woken for it, one answer read back, then the window update and PING grpc-go sends
 * after an answer's data, in a write of their own, and the PING's acknowledgement awaited), so the
 * server's per-call path, from the selector to the handler and back, runs as many times as C1 needs
 * to compile it, and the code that runs once per read twice as often. The request's path is a
 * Huffman-coded literal in every call, as grpc-go codes the first call of each method, so the
 * server's Huffman decoder is compiled too. There is almost no work on this side: the requests are
 * fixed bytes, their headers encoded once, and of the answers only the frame headers are read.
 *
 * <p>A call counts as answered when its stream carried a message and ended; a stream that ends
 * without one (a trailers-only error status), {@code RST_STREAM} or {@code GOAWAY} stop the run
 * with an {@link IOException} that says so. The calls run on the caller's thread, with blocking
 * I/O, until the count is reached or the time budget is spent; at the deadline the connection is
 * closed, which ends a read or write that waits for a server that stopped answering.
 */
public final class RepeatedCalls {

  /**
   * One kind of call.
   *
   * @param method the full method name, e.g. {@code v1beta1.DevicePlugin/Allocate}
   * @param request the encoded request message
   */
  public record Kind(String method, byte[] request) {}

  /**
   * What a run did.
   *
   * @param answered calls answered with a message
   * @param nanos how long the run took
   * @param outOfTime whether it stopped at the time budget before making every call
   */
  public record Outcome(int answered, long nanos, boolean outOfTime) {}

  private static final int INITIAL_WINDOW_SIZE = 0x4;
  private static final int DEFAULT_WINDOW = 65_535;
  private static final int CLIENT_WINDOW = 1 << 20;

  private final List<Kind> kinds;
  // Once every kind's headers entered the server's dynamic table, a kind's block refers to it for
  // all but the path and stays the same for the rest of the connection.
  private final byte[][] steadyBlocks;
  // Header values Huffman-coded as grpc-go codes them, and the path never indexed: every request
  // carries its method's path as a Huffman-coded literal, which the server decodes as it decodes
  // the kubelet's first call of each method.
  private final DefaultHttp2HeadersEncoder encoder =
      new DefaultHttp2HeadersEncoder(PATH_NEVER_INDEXED, false, 16, 0);
  private final ByteBuffer out;
  private int nextStream = 1;

  private static final Http2HeadersEncoder.SensitivityDetector PATH_NEVER_INDEXED =
      (name, value) -> Http2Headers.PseudoHeaderName.PATH.value().contentEquals(name);

  private RepeatedCalls(List<Kind> kinds) {
    this.kinds = List.copyOf(kinds);
    this.steadyBlocks = new byte[kinds.size()][];
    this.out = ByteBuffer.allocate(4 * (HEADER + MAX_FRAME));
  }

  /**
   * Makes up to {@code calls} calls on one new connection to {@code socket}, the kinds in turn.
   *
   * @param socket the server's socket file
   * @param kinds the calls to make, in turn; each request must fit one frame with its 5-byte prefix
   * @param calls how many calls in all
   * @param budgetNanos no call starts after this long (the first always does)
   * @param deadlineNanos the connection is closed after this long, whatever is under way
   * @param timer where the deadline fires
   * @return how many calls were answered and how long it took
   * @throws IOException when the socket cannot be reached, the connection is lost or closed at the
   *     deadline, or a call is not answered with a message
   */
  public static Outcome run(
      Path socket,
      List<Kind> kinds,
      int calls,
      long budgetNanos,
      long deadlineNanos,
      ScheduledExecutorService timer)
      throws IOException {
    for (Kind k : kinds) {
      if (k.request().length > MAX_FRAME - 5) {
        throw new IllegalArgumentException(
            "a request of "
                + k.request().length
                + " bytes does not fit one frame ("
                + (MAX_FRAME - 5)
                + " at most): "
                + k.method());
      }
    }
    if (kinds.isEmpty() || calls <= 0) {
      return new Outcome(0, 0, false);
    }
    return new RepeatedCalls(kinds).run(socket, calls, budgetNanos, deadlineNanos, timer);
  }

  private Outcome run(
      Path socket, int calls, long budgetNanos, long deadlineNanos, ScheduledExecutorService timer)
      throws IOException {
    long start = System.nanoTime();
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ScheduledFuture<?> deadline =
          timer.schedule(new Closer(ch), deadlineNanos, TimeUnit.NANOSECONDS);
      try {
        ch.connect(UnixDomainSocketAddress.of(socket));
        out.put(PREFACE);
        frameHeader(6, SETTINGS, 0, 0);
        out.putShort((short) INITIAL_WINDOW_SIZE).putInt(CLIENT_WINDOW);
        frameHeader(4, WINDOW_UPDATE, 0, 0);
        out.putInt(CLIENT_WINDOW - DEFAULT_WINDOW);
        Reader reader = new Reader(ch);
        int answered = 0;
        boolean outOfTime = false;
        while (answered < calls) {
          if (answered > 0 && System.nanoTime() - start > budgetNanos) {
            outOfTime = true;
            break;
          }
          request(answered % kinds.size());
          send(ch);
          reader.awaitEnd();
          answered++;
          // What the answers took of the connection's window goes back to the server; the
          // streams' windows (1 MiB each) are never near their end, a stream carrying one answer.
          if (reader.dataBytes > 0) {
            frameHeader(4, WINDOW_UPDATE, 0, 0);
            out.putInt(reader.dataBytes);
            reader.dataBytes = 0;
          }
          for (; reader.settingsToAck > 0; reader.settingsToAck--) {
            frameHeader(0, SETTINGS, ACK, 0);
          }
          // As grpc-go does after the data of an answer (its flow-control estimate), a PING with
          // the window update, in a write of its own: the server's loop wakes for it and answers
          // it, so the code that runs once per read (the selector, the connection's read and
          // write) runs twice per call and is compiled with the rest.
          frameHeader(8, PING, 0, 0);
          out.putLong(answered);
          send(ch);
          reader.awaitPingAck();
        }
        send(ch);
        return new Outcome(answered, System.nanoTime() - start, outOfTime);
      } finally {
        deadline.cancel(false);
      }
    }
  }

  private void request(int index) throws IOException {
    Kind kind = kinds.get(index);
    int stream = nextStream;
    nextStream += 2;
    byte[] block = headerBlock(index, stream);
    frameHeader(block.length, HEADERS, END_HEADERS, stream);
    out.put(block);
    frameHeader(5 + kind.request().length, DATA, END_STREAM, stream);
    out.put((byte) 0).putInt(kind.request().length).put(kind.request());
  }

  private byte[] headerBlock(int index, int stream) throws IOException {
    int sent = (stream - 1) / 2;
    if (sent >= 2 * kinds.size()) {
      return steadyBlocks[index];
    }
    Http2Headers headers =
        new DefaultHttp2Headers()
            .method("POST")
            .scheme("http")
            .path("/" + kinds.get(index).method())
            .authority("localhost")
            .add("content-type", "application/grpc")
            .add("user-agent", "deviceplugin4j-warm-up")
            .add("te", "trailers");
    ByteBuf buf = Unpooled.buffer();
    try {
      encoder.encodeHeaders(stream, headers, buf);
      if (buf.readableBytes() > MAX_FRAME) {
        throw new IOException(
            "the headers of a call to " + kinds.get(index).method() + " are too long");
      }
      byte[] block = new byte[buf.readableBytes()];
      buf.readBytes(block);
      if (sent >= kinds.size()) {
        steadyBlocks[index] = block;
      }
      return block;
    } catch (Http2Exception e) {
      throw new IOException("cannot encode the headers of a call: " + e.getMessage(), e);
    } finally {
      buf.release();
    }
  }

  private void frameHeader(int length, int type, int flags, int stream) {
    Http2Frames.putHeader(out, length, type, flags, stream);
  }

  private void send(SocketChannel ch) throws IOException {
    out.flip();
    while (out.hasRemaining()) {
      ch.write(out);
    }
    out.clear();
  }

  /** Reads the server's frames until the current call's stream ends. */
  private static final class Reader {
    private final SocketChannel ch;
    private final ByteBuffer in = ByteBuffer.allocate(HEADER + MAX_FRAME);
    private boolean message;
    private boolean pingAcked;
    int dataBytes;
    int settingsToAck;

    Reader(SocketChannel ch) {
      this.ch = ch;
    }

    void awaitEnd() throws IOException {
      message = false;
      pingAcked = false;
      awaitFrame(false);
    }

    void awaitPingAck() throws IOException {
      pingAcked = false;
      awaitFrame(true);
    }

    private void awaitFrame(boolean ping) throws IOException {
      while (true) {
        in.flip();
        while (in.remaining() >= HEADER) {
          int p = in.position();
          int length = Http2Frames.length(in, p);
          if (length > MAX_FRAME) {
            throw new IOException("the server sent a frame of " + length + " bytes");
          }
          if (in.remaining() < HEADER + length) {
            break;
          }
          int type = Http2Frames.type(in, p);
          int flags = Http2Frames.flags(in, p);
          int stream = Http2Frames.stream(in, p);
          in.position(p + HEADER + length);
          boolean ended = frame(type, flags, stream, length);
          if (ping ? pingAcked : ended) {
            in.compact();
            return;
          }
        }
        in.compact();
        if (ch.read(in) < 0) {
          throw new IOException("the server closed the connection");
        }
      }
    }

    /** True when the frame ended the call's stream with its answer. */
    private boolean frame(int type, int flags, int stream, int length) throws IOException {
      switch (type) {
        case DATA:
          dataBytes += length;
          message |= length > 0;
          return ended(flags, stream);
        case HEADERS:
          return ended(flags, stream);
        case SETTINGS:
          if ((flags & ACK) == 0) {
            settingsToAck++;
          }
          return false;
        case PING:
          pingAcked |= (flags & ACK) != 0;
          return false;
        case RST_STREAM:
          throw new IOException("the server reset stream " + stream);
        case GOAWAY:
          throw new IOException("the server sent GOAWAY");
        default:
          return false;
      }
    }

    private boolean ended(int flags, int stream) throws IOException {
      if ((flags & END_STREAM) == 0) {
        return false;
      }
      if (!message) {
        throw new IOException(
            "stream " + stream + " ended without an answer (the call failed with a status)");
      }
      return true;
    }
  }

  /** Closes the connection at the deadline: a blocked read or write then fails. */
  private static final class Closer implements Runnable {
    private final SocketChannel ch;

    Closer(SocketChannel ch) {
      this.ch = ch;
    }

    @Override
    public void run() {
      try {
        ch.close();
      } catch (IOException e) {
        // it is being closed either way
      }
    }
  }
}
