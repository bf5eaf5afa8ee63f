package io.github.deviceplugin4j.core.internal;

import static io.github.deviceplugin4j.core.internal.Http2Frames.ACK;
import static io.github.deviceplugin4j.core.internal.Http2Frames.CONTINUATION;
import static io.github.deviceplugin4j.core.internal.Http2Frames.DATA;
import static io.github.deviceplugin4j.core.internal.Http2Frames.END_HEADERS;
import static io.github.deviceplugin4j.core.internal.Http2Frames.END_STREAM;
import static io.github.deviceplugin4j.core.internal.Http2Frames.GOAWAY;
import static io.github.deviceplugin4j.core.internal.Http2Frames.HEADER;
import static io.github.deviceplugin4j.core.internal.Http2Frames.HEADERS;
import static io.github.deviceplugin4j.core.internal.Http2Frames.MAX_FRAME;
import static io.github.deviceplugin4j.core.internal.Http2Frames.PING;
import static io.github.deviceplugin4j.core.internal.Http2Frames.PREFACE;
import static io.github.deviceplugin4j.core.internal.Http2Frames.PRIORITY;
import static io.github.deviceplugin4j.core.internal.Http2Frames.RST_STREAM;
import static io.github.deviceplugin4j.core.internal.Http2Frames.SETTINGS;

import io.grpc.Status;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One unary gRPC call over a Unix socket of its own, spoken in plain HTTP/2 frames: connection
 * preface, one stream, the answer's headers, message and trailers. It is the Register call's
 * client. gRPC's own client (a channel: name resolution, load balancing, a transport, a call, each
 * handing over to the next thread) took 2-3 ms from a new {@code kubelet.sock} to the kubelet
 * receiving the Register, on the cold code path a restart runs; this one connects and writes the
 * whole request on the caller's thread.
 *
 * <p>What it does, and what it leaves out, since it only ever makes one small call on a fresh
 * connection: the request (headers with a {@code grpc-timeout}, then the message, which must fit
 * one frame) goes out at once, with no flow control to wait for; of what the server sends, the
 * answer's header blocks (HPACK, decoded by Netty's decoder, dynamic table included), its data,
 * {@code RST_STREAM}, {@code GOAWAY}, {@code SETTINGS} and {@code PING} (both acknowledged) are
 * read, anything else is skipped. The outcome is gRPC's: the message on status OK, otherwise a
 * {@link io.grpc.StatusRuntimeException} with the server's status and (percent-decoded) message;
 * UNAVAILABLE when the socket cannot be reached or the connection ends before the answer;
 * DEADLINE_EXCEEDED at the deadline; CANCELLED on {@link #cancel}. The connection is closed when
 * the call is over.
 */
final class UnaryCall {

  private static final int STREAM = 1;
  // Header blocks and answers up to 1 MiB: a long grpc-message (Netty's default limit is 8 KiB)
  // still decodes.
  private static final int MAX_HEADER_BLOCK = 1 << 20;

  private final Path socket;
  private final CompletableFuture<byte[]> result = new CompletableFuture<>();
  private volatile SocketChannel channel;
  private volatile ScheduledFuture<?> deadlineTask;

  // Read side, touched only by the reading thread.
  private final DefaultHttp2HeadersDecoder hpack =
      new DefaultHttp2HeadersDecoder(false, MAX_HEADER_BLOCK);
  private final ByteArrayOutputStream headerBlock = new ByteArrayOutputStream();
  private final ByteArrayOutputStream data = new ByteArrayOutputStream();
  private boolean blockEndsStream;
  private Http2Headers responseHeaders;

  private UnaryCall(Path socket) {
    this.socket = socket;
  }

  /**
   * Starts a call: connects and writes the request on this thread, then reads the answer on {@code
   * reader}.
   *
   * @param socket the server's socket file
   * @param method the full method name, e.g. {@code v1beta1.Registration/Register}
   * @param message the encoded request message (at most 16,379 bytes)
   * @param deadline how long the call may take
   * @param reader where the answer is read (it blocks until the answer, the deadline or a cancel)
   * @param timer where the deadline fires
   * @return the call
   */
  static UnaryCall start(
      Path socket,
      String method,
      byte[] message,
      Duration deadline,
      Executor reader,
      ScheduledExecutorService timer) {
    UnaryCall call = new UnaryCall(socket);
    call.begin(method, message, deadline, reader, timer);
    return call;
  }

  /**
   * The outcome.
   *
   * @return completes with the answer's message, or exceptionally with a {@link
   *     io.grpc.StatusRuntimeException}
   */
  CompletableFuture<byte[]> result() {
    return result;
  }

  /** Ends the call with CANCELLED, unless it is over already, and closes its connection. */
  void cancel() {
    fail(Status.CANCELLED.withDescription("call cancelled"), null);
  }

  private void begin(
      String method,
      byte[] message,
      Duration deadline,
      Executor reader,
      ScheduledExecutorService timer) {
    ByteBuffer out = ByteBuffer.wrap(request(method, message, deadline.toNanos()));
    try {
      SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
      channel = ch;
      // Non-blocking, so that this thread never waits: a Unix socket connects at once when the
      // server's accept queue has room, and a new connection takes the whole request.
      ch.configureBlocking(false);
      if (ch.connect(UnixDomainSocketAddress.of(socket))) {
        ch.write(out);
      }
    } catch (IOException | RuntimeException e) {
      fail(unreachable(e), e);
      return;
    }
    try {
      deadlineTask =
          timer.schedule(
              () ->
                  fail(
                      Status.DEADLINE_EXCEEDED.withDescription(
                          "no answer from " + socket + " within " + deadline.toMillis() + " ms"),
                      null),
              deadline.toNanos(),
              TimeUnit.NANOSECONDS);
      reader.execute(() -> finish(out));
    } catch (RejectedExecutionException e) {
      fail(Status.CANCELLED.withDescription("shutting down"), e);
    }
  }

  private void finish(ByteBuffer out) {
    SocketChannel ch = channel;
    boolean connected = false;
    try {
      ch.configureBlocking(true);
      if (ch.isConnectionPending()) {
        ch.finishConnect();
      }
      connected = true;
      while (out.hasRemaining()) {
        ch.write(out);
      }
      read(ch);
    } catch (IOException | RuntimeException e) {
      Status lost =
          Status.UNAVAILABLE.withDescription(
              "lost the connection to "
                  + socket
                  + " before the answer: "
                  + ResourcePlugin.describe(e));
      fail(result.isDone() ? null : connected ? lost : unreachable(e), e);
    } catch (Http2Exception e) {
      fail(Status.INTERNAL.withDescription("cannot decode the answer's headers: " + e), e);
    } finally {
      close();
    }
  }

  private void read(SocketChannel ch) throws IOException, Http2Exception {
    ByteBuffer in = ByteBuffer.allocate(HEADER + MAX_FRAME);
    while (!result.isDone()) {
      if (ch.read(in) < 0) {
        fail(
            Status.UNAVAILABLE.withDescription(socket + " closed the connection before answering"),
            null);
        return;
      }
      in.flip();
      while (in.remaining() >= HEADER) {
        int p = in.position();
        int length = Http2Frames.length(in, p);
        if (length > MAX_FRAME) {
          fail(
              Status.INTERNAL.withDescription(
                  socket + " sent a frame of " + length + " bytes, over " + MAX_FRAME),
              null);
          return;
        }
        if (in.remaining() < HEADER + length) {
          break;
        }
        int type = Http2Frames.type(in, p);
        int flags = Http2Frames.flags(in, p);
        int stream = Http2Frames.stream(in, p);
        byte[] payload = new byte[length];
        in.position(p + HEADER);
        in.get(payload);
        frame(ch, type, flags, stream, payload);
        if (result.isDone()) {
          return;
        }
      }
      in.compact();
    }
  }

  private void frame(SocketChannel ch, int type, int flags, int stream, byte[] payload)
      throws IOException, Http2Exception {
    switch (type) {
      case SETTINGS -> {
        if ((flags & ACK) == 0) {
          write(ch, frameHeader(0, SETTINGS, ACK, 0));
        }
      }
      case PING -> {
        if ((flags & ACK) == 0 && payload.length == 8) {
          write(ch, concat(frameHeader(8, PING, ACK, 0), payload));
        }
      }
      case GOAWAY -> {
        int last = payload.length >= 8 ? ByteBuffer.wrap(payload).getInt(0) & 0x7fffffff : 0;
        if (last < STREAM) {
          long code = payload.length >= 8 ? ByteBuffer.wrap(payload).getInt(4) & 0xffffffffL : 0;
          fail(
              Status.UNAVAILABLE.withDescription(
                  socket + " is going away (GOAWAY, error code " + code + ") before the call"),
              null);
        }
      }
      case RST_STREAM -> {
        if (stream == STREAM) {
          long code = payload.length >= 4 ? ByteBuffer.wrap(payload).getInt(0) & 0xffffffffL : 0;
          fail(resetStatus(code), null);
        }
      }
      case HEADERS -> {
        if (stream == STREAM) {
          int[] at = content(payload, flags, (flags & PRIORITY) != 0 ? 5 : 0, "HEADERS");
          headerBlock.reset();
          headerBlock.write(payload, at[0], at[1] - at[0]);
          blockEndsStream = (flags & END_STREAM) != 0;
          if ((flags & END_HEADERS) != 0) {
            headers();
          }
        }
      }
      case CONTINUATION -> {
        if (stream == STREAM) {
          if (headerBlock.size() + payload.length > MAX_HEADER_BLOCK) {
            throw protocolError("a header block over " + MAX_HEADER_BLOCK + " bytes");
          }
          headerBlock.write(payload, 0, payload.length);
          if ((flags & END_HEADERS) != 0) {
            headers();
          }
        }
      }
      case DATA -> {
        if (stream == STREAM) {
          int[] at = content(payload, flags, 0, "DATA");
          int from = at[0];
          int to = at[1];
          if (data.size() + to - from > MAX_HEADER_BLOCK) {
            fail(
                Status.RESOURCE_EXHAUSTED.withDescription(
                    socket + " answered with over " + MAX_HEADER_BLOCK + " bytes"),
                null);
            return;
          }
          data.write(payload, from, to - from);
          if ((flags & END_STREAM) != 0) {
            fail(
                Status.INTERNAL.withDescription(socket + " ended the answer without trailers"),
                null);
          }
        }
      }
      default -> {} // WINDOW_UPDATE, PRIORITY, PUSH_PROMISE (push is never asked for), unknown
    }
  }

  private static int[] content(byte[] payload, int flags, int skip, String frame)
      throws Http2Exception {
    int[] at = Http2Frames.content(payload, 0, payload.length, flags, skip);
    if (at == null) {
      throw protocolError("a " + frame + " frame shorter than its padding");
    }
    return at;
  }

  private void headers() throws Http2Exception {
    ByteBuf block = Unpooled.wrappedBuffer(headerBlock.toByteArray());
    Http2Headers decoded;
    try {
      decoded = hpack.decodeHeaders(STREAM, block);
    } finally {
      block.release();
    }
    if (responseHeaders == null) {
      responseHeaders = decoded;
      if (blockEndsStream) {
        complete(decoded); // trailers only: an error, or an answer without a message
      }
    } else if (blockEndsStream) {
      complete(decoded);
    } else {
      throw protocolError("a second header block that does not end the stream");
    }
  }

  private void complete(Http2Headers trailers) {
    goAway();
    CharSequence grpcStatus = trailers.get("grpc-status");
    if (grpcStatus == null) {
      fail(httpStatus(responseHeaders.status()), null);
      return;
    }
    Status status;
    try {
      status = Status.fromCodeValue(Integer.parseInt(grpcStatus.toString()));
    } catch (NumberFormatException e) {
      fail(Status.INTERNAL.withDescription("grpc-status is not a number: " + grpcStatus), e);
      return;
    }
    CharSequence message = trailers.get("grpc-message");
    if (!status.isOk()) {
      fail(message == null ? status : status.withDescription(percentDecode(message)), null);
      return;
    }
    byte[] body = data.toByteArray();
    if (body.length < 5) {
      fail(Status.INTERNAL.withDescription(socket + " answered OK without a message"), null);
      return;
    }
    int length = ByteBuffer.wrap(body).getInt(1);
    if (body[0] != 0 || length != body.length - 5) {
      fail(
          Status.INTERNAL.withDescription(
              socket + " answered with a compressed or mis-framed message"),
          null);
      return;
    }
    if (result.complete(Arrays.copyOfRange(body, 5, body.length))) {
      close();
    }
  }

  /**
   * Tells the server, as a gRPC client closing its channel does, that this connection takes no more
   * streams (GOAWAY, last stream 0, no error), before it is closed. Best effort.
   */
  private void goAway() {
    SocketChannel ch = channel;
    try {
      write(ch, concat(frameHeader(8, GOAWAY, 0, 0), new byte[8]));
    } catch (IOException | RuntimeException e) {
      // the server went first; nothing is lost
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] both = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }

  /** Completes the call with an error (null: already done) and closes the connection. */
  private void fail(Status status, Throwable cause) {
    if (status != null) {
      result.completeExceptionally(status.withCause(cause).asRuntimeException());
    }
    close();
  }

  private void close() {
    ScheduledFuture<?> d = deadlineTask;
    if (d != null && result.isDone()) {
      d.cancel(false);
    }
    SocketChannel ch = channel;
    if (ch != null && result.isDone()) {
      try {
        ch.close();
      } catch (IOException e) {
        // nothing more to do with it
      }
    }
  }

  private Status unreachable(Throwable e) {
    return Status.UNAVAILABLE.withDescription(
        "cannot reach " + socket + ": " + ResourcePlugin.describe(e));
  }

  private static Http2Exception protocolError(String what) {
    return Http2Exception.connectionError(Http2Error.PROTOCOL_ERROR, "%s", what);
  }

  private static void write(SocketChannel ch, byte[] bytes) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  // ------------------------------------------------------------------------------- encoding

  /**
   * The whole request: preface, SETTINGS (no server push), HEADERS and DATA of stream 1.
   *
   * @param method full method name
   * @param message encoded request message
   * @param timeoutNanos the deadline, sent as {@code grpc-timeout}
   * @return the bytes to write
   */
  static byte[] request(String method, byte[] message, long timeoutNanos) {
    if (message.length + 5 > MAX_FRAME) {
      throw new IllegalArgumentException(
          "a request message of " + message.length + " bytes does not fit one frame");
    }
    ByteArrayOutputStream block = new ByteArrayOutputStream(256);
    literal(block, ":method", "POST");
    literal(block, ":scheme", "http");
    literal(block, ":path", "/" + method);
    literal(block, ":authority", "localhost");
    literal(block, "content-type", "application/grpc");
    literal(block, "te", "trailers");
    literal(block, "grpc-timeout", timeout(timeoutNanos));
    literal(block, "user-agent", "deviceplugin4j");
    byte[] headers = block.toByteArray();
    if (headers.length > MAX_FRAME) {
      throw new IllegalArgumentException("a method name of " + method.length() + " characters");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(128 + headers.length + message.length);
    out.writeBytes(PREFACE);
    out.writeBytes(frameHeader(6, SETTINGS, 0, 0));
    out.writeBytes(new byte[] {0, 2, 0, 0, 0, 0}); // SETTINGS_ENABLE_PUSH = 0
    out.writeBytes(frameHeader(headers.length, HEADERS, END_HEADERS, STREAM));
    out.writeBytes(headers);
    out.writeBytes(frameHeader(5 + message.length, DATA, END_STREAM, STREAM));
    out.write(0); // not compressed
    out.writeBytes(ByteBuffer.allocate(4).putInt(message.length).array());
    out.writeBytes(message);
    return out.toByteArray();
  }

  /** A {@code grpc-timeout} value: at most 8 digits and a unit. */
  static String timeout(long nanos) {
    long n = Math.max(1, nanos);
    String[] units = {"n", "u", "m", "S", "M", "H"};
    long[] scale = {1, 1_000, 1_000, 1_000, 60, 60};
    long value = n;
    for (int i = 0; i < units.length; i++) {
      if (i > 0) {
        value = value / scale[i] + (value % scale[i] == 0 ? 0 : 1); // up: never shorter
      }
      if (value < 100_000_000L || i == units.length - 1) {
        return Math.min(value, 99_999_999L) + units[i];
      }
    }
    throw new AssertionError();
  }

  private static byte[] frameHeader(int length, int type, int flags, int stream) {
    return new byte[] {
      (byte) (length >>> 16),
      (byte) (length >>> 8),
      (byte) length,
      (byte) type,
      (byte) flags,
      (byte) (stream >>> 24),
      (byte) (stream >>> 16),
      (byte) (stream >>> 8),
      (byte) stream
    };
  }

  /** An HPACK "literal header field without indexing, new name", no Huffman coding. */
  private static void literal(ByteArrayOutputStream out, String name, String value) {
    out.write(0);
    string(out, name);
    string(out, value);
  }

  private static void string(ByteArrayOutputStream out, String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    int n = bytes.length;
    if (n < 127) {
      out.write(n);
    } else {
      out.write(127);
      n -= 127;
      while (n >= 128) {
        out.write((n & 0x7f) | 0x80);
        n >>>= 7;
      }
      out.write(n);
    }
    out.writeBytes(bytes);
  }

  // ------------------------------------------------------------------------------- decoding

  /** The status gRPC gives an answer without {@code grpc-status}, from its HTTP status. */
  static Status httpStatus(CharSequence httpStatus) {
    int code;
    try {
      code = httpStatus == null ? -1 : Integer.parseInt(httpStatus.toString());
    } catch (NumberFormatException e) {
      code = -1;
    }
    Status status =
        switch (code) {
          case 400, 431 -> Status.INTERNAL;
          case 401 -> Status.UNAUTHENTICATED;
          case 403 -> Status.PERMISSION_DENIED;
          case 404 -> Status.UNIMPLEMENTED;
          case 429, 502, 503, 504 -> Status.UNAVAILABLE;
          default -> code == 200 ? Status.INTERNAL : Status.UNKNOWN;
        };
    return status.withDescription(
        code == 200 ? "an answer without grpc-status" : "HTTP status " + httpStatus);
  }

  /** The status gRPC gives a stream the server reset with an HTTP/2 error code. */
  static Status resetStatus(long code) {
    Status status =
        code == 0x7 // REFUSED_STREAM: not processed, safe to retry
            ? Status.UNAVAILABLE
            : code == 0x8 // CANCEL
                ? Status.CANCELLED
                : code == 0xb // ENHANCE_YOUR_CALM
                    ? Status.RESOURCE_EXHAUSTED
                    : code == 0xc // INADEQUATE_SECURITY
                        ? Status.PERMISSION_DENIED
                        : Status.INTERNAL;
    return status.withDescription("the server reset the call (HTTP/2 error code " + code + ")");
  }

  /** A {@code grpc-message}: UTF-8, with {@code %XX} for bytes outside printable ASCII. */
  static String percentDecode(CharSequence message) {
    String s = message.toString();
    if (s.indexOf('%') < 0) {
      return s;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 2 < s.length()) {
        int hi = Character.digit(s.charAt(i + 1), 16);
        int lo = Character.digit(s.charAt(i + 2), 16);
        if (hi >= 0 && lo >= 0) {
          out.write(hi << 4 | lo);
          i += 2;
          continue;
        }
      }
      out.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
