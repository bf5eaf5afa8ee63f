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
import static io.github.deviceplugin4j.core.internal.Http2Frames.PUSH_PROMISE;
import static io.github.deviceplugin4j.core.internal.Http2Frames.RST_STREAM;
import static io.github.deviceplugin4j.core.internal.Http2Frames.SETTINGS;
import static io.github.deviceplugin4j.core.internal.Http2Frames.WINDOW_UPDATE;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InternalMetadata;
import io.grpc.KnownLength;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.nio.NioIoOps;
import io.netty.channel.nio.NioSelectableChannelIoHandle;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gRPC server on a Unix socket, spoken in plain HTTP/2 frames on the host's event loop: the
 * server side of what {@link UnaryCall} is for the client. grpc-java's server and Netty's HTTP/2
 * codec run about 2,500 methods per call, which the kubelet pays in the interpreter or in C1 on a
 * plugin whose memory budget leaves that path uncompiled; this one reads the frames, decodes the
 * request headers with Netty's HPACK decoder, and calls the services' handlers (interceptors
 * included) through a {@link ServerCall} of its own.
 *
 * <p>What it serves: unary and server-streaming methods (client streaming works too: every message
 * is delivered as it arrives), request messages up to 4 MiB like grpc-java's default, no
 * compression (a compressed request is answered UNIMPLEMENTED), {@code grpc-timeout} as the call's
 * deadline (the stream is reset at the deadline, as grpc-java does). Flow control both ways: the
 * server announces 1 MiB windows and returns them as requests are read; answers wait for the
 * client's windows, never blocking the loop, and {@link ServerCall#isReady()} turns false while 32
 * KiB of a call wait to be written, as grpc-java's does. {@link #shutdown()} stops accepting and
 * sends GOAWAY, so existing calls go on; {@link #shutdownNow()} closes every connection.
 *
 * <p>Threads: every read, every listener callback and every socket event runs on the event loop
 * given at start (one thread); answers may be sent from any thread, and are written at once without
 * blocking, the rest when the socket takes it.
 */
final class H2Server extends Server {

  private static final Logger LOG = LoggerFactory.getLogger(H2Server.class);

  static final int MAX_INBOUND_MESSAGE = 4 << 20;
  private static final int MAX_HEADER_LIST = 16 << 10;
  private static final int ON_READY_THRESHOLD = 32 << 10;
  private static final int WINDOW = 1 << 20;
  private static final int DEFAULT_WINDOW = 65_535;

  private static final int NO_ERROR = 0x0;
  private static final int PROTOCOL_ERROR = 0x1;
  private static final int FLOW_CONTROL_ERROR = 0x3;
  private static final int FRAME_SIZE_ERROR = 0x6;
  private static final int REFUSED_STREAM = 0x7;
  private static final int CANCEL = 0x8;
  private static final int COMPRESSION_ERROR = 0x9;

  /** {@code :status: 200} (static table entry 8) and {@code content-type: application/grpc}. */
  private static final byte[] RESPONSE_HEADERS = responseHeaders();

  /** Trailers of a call that ends OK: {@code grpc-status: 0}. */
  private static final byte[] OK_TRAILERS = okTrailers();

  /** SETTINGS (1 MiB stream windows, 16 KiB header lists), and a 1 MiB connection window. */
  private static final byte[] SERVER_PREFACE = serverPreface();

  private final Path path;
  private final IoEventLoop loop;
  private final Map<String, ServerMethodDefinition<?, ?>> methods = new HashMap<>();
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  private final Object state = new Object();
  private ServerSocketChannel listener;
  private IoRegistration listening;
  private boolean shutdown;
  private boolean terminated;

  private H2Server(Path path, List<ServerServiceDefinition> services, EventLoopGroup group) {
    this.path = path;
    this.loop = (IoEventLoop) group.next();
    for (ServerServiceDefinition service : services) {
      for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
        methods.put(m.getMethodDescriptor().getFullMethodName(), m);
      }
    }
  }

  /**
   * Binds and starts a server.
   *
   * @param path where to bind (the socket file is created)
   * @param services what to serve
   * @param group the event loop group (NIO) whose loop runs the server, and where call deadlines
   *     fire
   * @return the running server
   * @throws IOException when the socket cannot be bound or registered
   */
  static H2Server start(Path path, List<ServerServiceDefinition> services, EventLoopGroup group)
      throws IOException {
    H2Server server = new H2Server(path, services, group);
    server.bind();
    return server;
  }

  private void bind() throws IOException {
    ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      ch.bind(UnixDomainSocketAddress.of(path), 128);
      ch.configureBlocking(false);
      NioSelectableChannelIoHandle<ServerSocketChannel> handle =
          new NioSelectableChannelIoHandle<>(ch) {
            @Override
            protected void handle(ServerSocketChannel channel, SelectionKey key) {
              accept(channel);
            }
          };
      listening =
          loop.submit(
                  new java.util.concurrent.Callable<IoRegistration>() {
                    @Override
                    public IoRegistration call() {
                      return register(handle, NioIoOps.ACCEPT);
                    }
                  })
              .syncUninterruptibly()
              .getNow();
      listener = ch;
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e instanceof IOException io ? io : new IOException("cannot serve " + path, e);
    }
  }

  /** Registers a channel with the loop and sets its interest. On the loop. */
  private IoRegistration register(NioSelectableChannelIoHandle<?> handle, NioIoOps ops) {
    io.netty.util.concurrent.Future<IoRegistration> f = loop.register(handle);
    if (!f.isSuccess()) {
      throw new IllegalStateException("cannot register a socket with the event loop", f.cause());
    }
    IoRegistration r = f.getNow();
    r.submit(ops);
    return r;
  }

  @Override
  public Server start() {
    return this; // started when bound
  }

  private void accept(ServerSocketChannel channel) {
    while (true) {
      SocketChannel ch;
      try {
        ch = channel.accept();
      } catch (IOException e) {
        LOG.debug("accept on {} failed: {}", path, e.toString());
        return;
      }
      if (ch == null) {
        return;
      }
      synchronized (state) {
        if (shutdown) {
          closeQuietly(ch);
          continue;
        }
      }
      Connection c = new Connection(ch);
      try {
        ch.configureBlocking(false);
        connections.add(c);
        c.registration =
            register(
                new NioSelectableChannelIoHandle<SocketChannel>(ch) {
                  @Override
                  protected void handle(SocketChannel s, SelectionKey key) {
                    c.ready(key);
                  }
                },
                NioIoOps.READ);
      } catch (IOException | RuntimeException e) {
        LOG.debug("cannot serve a connection on {}: {}", path, e.toString());
        c.closeConnection();
      }
    }
  }

  @Override
  public int getPort() {
    return -1;
  }

  @Override
  public List<? extends SocketAddress> getListenSockets() {
    return List.of(UnixDomainSocketAddress.of(path));
  }

  @Override
  public Server shutdown() {
    synchronized (state) {
      if (shutdown) {
        return this;
      }
      shutdown = true;
    }
    closeListener();
    for (Connection c : connections) {
      c.goAway(false);
    }
    checkTerminated();
    return this;
  }

  @Override
  public Server shutdownNow() {
    shutdown();
    for (Connection c : connections) {
      c.goAway(true);
    }
    checkTerminated();
    return this;
  }

  private void closeListener() {
    Runnable close =
        new Runnable() {
          @Override
          public void run() {
            if (listening != null) {
              listening.cancel();
            }
            closeQuietly(listener);
          }
        };
    if (loop.inEventLoop() || loop.isShuttingDown()) {
      close.run();
    } else {
      loop.execute(close);
    }
  }

  @Override
  public boolean isShutdown() {
    synchronized (state) {
      return shutdown;
    }
  }

  @Override
  public boolean isTerminated() {
    synchronized (state) {
      return terminated;
    }
  }

  private void checkTerminated() {
    synchronized (state) {
      if (shutdown && connections.isEmpty() && !terminated) {
        terminated = true;
        state.notifyAll();
      }
    }
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long end = System.nanoTime() + unit.toNanos(timeout);
    synchronized (state) {
      while (!terminated) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(state, left);
      }
      return true;
    }
  }

  @Override
  public void awaitTermination() throws InterruptedException {
    synchronized (state) {
      while (!terminated) {
        state.wait();
      }
    }
  }

  private static void closeQuietly(java.io.Closeable c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // nothing more to do with it
      }
    }
  }

  // ------------------------------------------------------------------------------- connection

  /**
   * One client connection. Reads and callbacks on the loop; the output buffer, the send windows and
   * the calls' pending messages under the connection's monitor.
   */
  private final class Connection {
    private final SocketChannel ch;
    private IoRegistration registration;
    private final Attributes attributes;

    // Loop only.
    private final ByteBuffer in = ByteBuffer.allocate(2 * (HEADER + MAX_FRAME));
    private boolean prefaceRead;
    private final Map<Integer, Call<?, ?>> streams = new HashMap<>();
    private final DefaultHttp2HeadersDecoder hpack =
        new DefaultHttp2HeadersDecoder(false, MAX_HEADER_LIST);
    private byte[] headerBlock;
    private int headerBlockLength;
    private int headerStream;
    private int headerFlags;
    private int lastStream;
    private int receivedUnacked;
    private boolean batching;
    // Whether the last read left room in the buffer: the socket then had nothing more at the time.
    private boolean drained;

    // Under the monitor.
    private ByteBuffer out = ByteBuffer.allocate(4096);
    private boolean waitingToWrite;
    private long sendWindow = DEFAULT_WINDOW;
    private int peerInitialWindow = DEFAULT_WINDOW;
    private final Set<Call<?, ?>> blocked = new LinkedHashSet<>();
    private boolean goingAway;
    private boolean closed;
    private boolean someNotReady;

    Connection(SocketChannel ch) {
      this.ch = ch;
      Attributes.Builder a = Attributes.newBuilder();
      try {
        a.set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, ch.getLocalAddress());
        a.set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, ch.getRemoteAddress());
      } catch (IOException e) {
        // addresses are informational
      }
      this.attributes = a.build();
    }

    /** A socket event, on the loop. */
    void ready(SelectionKey key) {
      if (!key.isValid()) {
        closeConnection();
        return;
      }
      int ops = key.readyOps();
      if ((ops & SelectionKey.OP_WRITE) != 0) {
        writable();
      }
      if ((ops & SelectionKey.OP_READ) != 0) {
        readable();
      }
    }

    private void readable() {
      batching = true;
      try {
        while (true) {
          int n = ch.read(in);
          if (n < 0) {
            closeConnection();
            return;
          }
          if (n == 0) {
            break;
          }
          drained = in.hasRemaining(); // the socket had less than the buffer holds
          in.flip();
          if (!frames()) {
            return;
          }
          in.compact();
          if (in.hasRemaining()) {
            break; // the socket had less than the buffer holds: nothing more for now
          }
        }
      } catch (IOException e) {
        LOG.debug("connection on {} lost: {}", path, e.toString());
        closeConnection();
        return;
      } finally {
        batching = false;
      }
      synchronized (this) {
        flush();
      }
      notifyReady(); // a call that found the batch's output too large may go on
    }

    /** Handles every whole frame in the buffer; false when the connection was closed. */
    private boolean frames() {
      if (!prefaceRead) {
        if (in.remaining() < PREFACE.length) {
          return true;
        }
        for (byte b : PREFACE) {
          if (in.get() != b) {
            LOG.debug("a client of {} did not speak HTTP/2 (bad preface)", path);
            closeConnection();
            return false;
          }
        }
        prefaceRead = true;
        // The server's preface (SETTINGS) goes out with the answer to the client's: a client
        // that connects and leaves without a word (a liveness probe) is never written to.
        synchronized (this) {
          out.put(SERVER_PREFACE);
        }
      }
      while (in.remaining() >= HEADER) {
        int p = in.position();
        int length = Http2Frames.length(in, p);
        if (length > MAX_FRAME) {
          return connectionError(FRAME_SIZE_ERROR, "a frame of " + length + " bytes");
        }
        if (in.remaining() < HEADER + length) {
          return true;
        }
        int type = Http2Frames.type(in, p);
        int flags = Http2Frames.flags(in, p);
        int stream = Http2Frames.stream(in, p);
        int from = p + HEADER;
        in.position(from + length);
        if (headerBlock != null && type != CONTINUATION) {
          return connectionError(PROTOCOL_ERROR, "a header block interrupted by a frame");
        }
        if (!frame(type, flags, stream, from, length)) {
          return false;
        }
      }
      return true;
    }

    private boolean frame(int type, int flags, int stream, int from, int length) {
      switch (type) {
        case DATA:
          return data(flags, stream, from, length);
        case HEADERS:
          {
            if (stream == 0 || (stream & 1) == 0) {
              return connectionError(PROTOCOL_ERROR, "HEADERS on stream " + stream);
            }
            int[] at =
                Http2Frames.content(
                    in.array(), from, length, flags, (flags & PRIORITY) != 0 ? 5 : 0);
            if (at == null) {
              return connectionError(PROTOCOL_ERROR, "a HEADERS frame shorter than its padding");
            }
            int start = at[0];
            int end = at[1];
            headerStream = stream;
            headerFlags = flags;
            headerBlock = new byte[Math.max(end - start, 64)];
            headerBlockLength = 0;
            appendHeaderBlock(start, end - start);
            return (flags & END_HEADERS) == 0 || headers();
          }
        case CONTINUATION:
          if (headerBlock == null || stream != headerStream) {
            return connectionError(PROTOCOL_ERROR, "an unexpected CONTINUATION");
          }
          if (headerBlockLength + length > MAX_HEADER_LIST * 4) {
            return connectionError(PROTOCOL_ERROR, "a header block over " + MAX_HEADER_LIST * 4);
          }
          appendHeaderBlock(from, length);
          return (flags & END_HEADERS) == 0 || headers();
        case RST_STREAM:
          {
            Call<?, ?> call = streams.remove(stream);
            if (call != null) {
              call.cancelled(
                  Status.CANCELLED.withDescription(
                      "the client cancelled the call (RST_STREAM "
                          + (length >= 4 ? in.getInt(from) : -1)
                          + ")"));
            }
            return true;
          }
        case SETTINGS:
          if ((flags & ACK) == 0) {
            return settings(from, length);
          }
          return true;
        case PUSH_PROMISE:
          return connectionError(PROTOCOL_ERROR, "PUSH_PROMISE from a client");
        case PING:
          if ((flags & ACK) == 0) {
            if (length != 8) {
              return connectionError(FRAME_SIZE_ERROR, "a PING of " + length + " bytes");
            }
            synchronized (this) {
              frameHeader(8, PING, ACK, 0);
              ensure(8);
              out.put(in.array(), from, 8);
              flush();
            }
          }
          return true;
        case GOAWAY:
          synchronized (this) {
            goingAway = true;
          }
          return true;
        case WINDOW_UPDATE:
          return windowUpdate(stream, length >= 4 ? in.getInt(from) & 0x7fffffff : 0);
        default:
          return true; // PRIORITY, unknown frames
      }
    }

    private void appendHeaderBlock(int from, int length) {
      if (headerBlockLength + length > headerBlock.length) {
        headerBlock =
            java.util.Arrays.copyOf(
                headerBlock, Math.max(headerBlock.length * 2, headerBlockLength + length));
      }
      System.arraycopy(in.array(), from, headerBlock, headerBlockLength, length);
      headerBlockLength += length;
    }

    private boolean settings(int from, int length) {
      if (length % 6 != 0) {
        return connectionError(FRAME_SIZE_ERROR, "a SETTINGS frame of " + length + " bytes");
      }
      synchronized (this) {
        for (int i = from; i < from + length; i += 6) {
          int id = in.getShort(i) & 0xffff;
          int value = in.getInt(i + 2);
          if (id == 0x4) { // INITIAL_WINDOW_SIZE
            if (value < 0) {
              return connectionError(FLOW_CONTROL_ERROR, "an initial window over 2^31-1");
            }
            int delta = value - peerInitialWindow;
            peerInitialWindow = value;
            for (Call<?, ?> c : streams.values()) {
              c.sendWindow += delta;
            }
          }
        }
        frameHeader(0, SETTINGS, ACK, 0);
        if (peerInitialWindow > 0) {
          for (Call<?, ?> c : new ArrayList<>(streams.values())) {
            c.writePending();
          }
        }
        flush();
      }
      return true;
    }

    private boolean windowUpdate(int stream, int increment) {
      synchronized (this) {
        if (stream == 0) {
          sendWindow += increment;
          if (sendWindow > Integer.MAX_VALUE) {
            return connectionError(FLOW_CONTROL_ERROR, "a connection window over 2^31-1");
          }
          if (!blocked.isEmpty()) {
            List<Call<?, ?>> waiting = new ArrayList<>(blocked);
            blocked.clear();
            for (Call<?, ?> c : waiting) {
              c.writePending();
            }
          }
        } else {
          Call<?, ?> c = streams.get(stream);
          if (c != null) {
            c.sendWindow += increment;
            c.writePending();
          }
        }
        flush();
      }
      notifyReady();
      return true;
    }

    private boolean data(int flags, int stream, int from, int length) {
      if (stream == 0) {
        return connectionError(PROTOCOL_ERROR, "DATA on stream 0");
      }
      receivedUnacked += length;
      if (receivedUnacked >= WINDOW / 2) {
        synchronized (this) {
          windowUpdateFrame(0, receivedUnacked);
        }
        receivedUnacked = 0;
      }
      Call<?, ?> call = streams.get(stream);
      if (call == null) {
        return true; // a stream already closed or reset: its data is dropped
      }
      int[] at = Http2Frames.content(in.array(), from, length, flags, 0);
      if (at == null) {
        return connectionError(PROTOCOL_ERROR, "a DATA frame shorter than its padding");
      }
      int start = at[0];
      int end = at[1];
      call.received(in.array(), start, end - start, length, (flags & END_STREAM) != 0);
      return true;
    }

    private boolean headers() {
      byte[] block = headerBlock;
      int blockLength = headerBlockLength;
      int stream = headerStream;
      int flags = headerFlags;
      headerBlock = null;
      Http2Headers headers;
      ByteBuf buf = Unpooled.wrappedBuffer(block, 0, blockLength);
      try {
        headers = hpack.decodeHeaders(stream, buf);
      } catch (Http2Exception e) {
        return connectionError(COMPRESSION_ERROR, "cannot decode a header block: " + e);
      } finally {
        buf.release();
      }
      Call<?, ?> existing = streams.get(stream);
      if (existing != null) {
        if ((flags & END_STREAM) != 0) {
          existing.received(null, 0, 0, 0, true); // trailers from the client end its side
        }
        return true;
      }
      if (stream <= lastStream) {
        return true; // a stream that is over
      }
      lastStream = stream;
      boolean refuse;
      synchronized (this) {
        refuse = goingAway || closed;
      }
      if (refuse) {
        synchronized (this) {
          rstStream(stream, REFUSED_STREAM);
        }
        return true;
      }
      newCall(stream, headers, (flags & END_STREAM) != 0);
      return true;
    }

    private void newCall(int stream, Http2Headers headers, boolean endStream) {
      CharSequence method = headers.method();
      CharSequence contentType = headers.get("content-type");
      CharSequence pathHeader = headers.path();
      if (method == null || !"POST".contentEquals(method)) {
        httpError(stream, 405, Status.INTERNAL, "Method '" + method + "' is not supported");
        return;
      }
      if (contentType == null || !contentType.toString().startsWith("application/grpc")) {
        httpError(
            stream,
            415,
            Status.INTERNAL,
            contentType == null
                ? "Content-Type is missing from the request"
                : "Content-Type '" + contentType + "' is not supported");
        return;
      }
      String name =
          pathHeader == null || pathHeader.length() < 2 || pathHeader.charAt(0) != '/'
              ? ""
              : pathHeader.subSequence(1, pathHeader.length()).toString();
      ServerMethodDefinition<?, ?> definition = methods.get(name);
      if (definition == null) {
        httpError(stream, 200, Status.UNIMPLEMENTED, "Method not found: " + name);
        return;
      }
      start(stream, definition, headers, endStream);
    }

    private <Q, R> void start(
        int stream,
        ServerMethodDefinition<Q, R> definition,
        Http2Headers headers,
        boolean endStream) {
      Metadata metadata = metadata(headers);
      CharSequence timeout = headers.get("grpc-timeout");
      long timeoutNanos = timeout == null ? -1 : parseTimeout(timeout);
      Context.CancellableContext context =
          timeoutNanos >= 0
              ? Context.ROOT.withDeadline(Deadline.after(timeoutNanos, TimeUnit.NANOSECONDS), loop)
              : Context.ROOT.withCancellation();
      CharSequence authority = headers.authority();
      Call<Q, R> call =
          new Call<>(
              this,
              stream,
              definition.getMethodDescriptor(),
              context,
              authority == null ? null : authority.toString());
      synchronized (this) {
        call.sendWindow = peerInitialWindow;
      }
      streams.put(stream, call);
      if (timeoutNanos >= 0) {
        context.addListener(new DeadlineListener(call, timeoutNanos), DIRECT);
      }
      ServerCallHandler<Q, R> handler = definition.getServerCallHandler();
      Context previous = context.attach();
      try {
        call.listener = handler.startCall(call, metadata);
        if (call.listener == null) {
          throw new NullPointerException("startCall returned a null listener");
        }
      } catch (RuntimeException | Error e) {
        context.detach(previous);
        call.failed(e);
        return;
      }
      context.detach(previous);
      if (endStream) {
        call.received(null, 0, 0, 0, true);
      }
      call.callback(READY, null);
    }

    /** A trailers-only answer, with an HTTP status, to a request that names no call. */
    private void httpError(int stream, int httpStatus, Status status, String message) {
      synchronized (this) {
        byte[] block = trailersOnly(httpStatus, status.withDescription(message), null);
        headerFrames(stream, block, true);
        rstStream(stream, NO_ERROR);
        flush();
      }
    }

    /** Tells the calls that found themselves not ready and are ready now. On the loop. */
    void notifyReady() {
      List<Call<?, ?>> ready = new ArrayList<>(1);
      synchronized (this) {
        if (!someNotReady) {
          return;
        }
        someNotReady = false;
        for (Call<?, ?> c : streams.values()) {
          if (c.wasNotReady && c.isReady()) {
            c.wasNotReady = false;
            ready.add(c);
          }
        }
      }
      for (Call<?, ?> c : ready) {
        c.callback(READY, null);
      }
    }

    private boolean connectionError(int code, String what) {
      LOG.debug("closing a connection on {}: {}", path, what);
      synchronized (this) {
        goAwayFrame(code, what);
        flush();
      }
      closeConnection();
      return false;
    }

    /** Sends GOAWAY; on {@code now}, closes the connection too. From any thread. */
    void goAway(boolean now) {
      onLoop(new ConnectionTask(this, now ? ConnectionTask.GO_AWAY_NOW : ConnectionTask.GO_AWAY));
    }

    /** On the loop. */
    void goAwayNow(boolean now) {
      synchronized (this) {
        if (closed) {
          return;
        }
        if (!goingAway || now) {
          goAwayFrame(NO_ERROR, null);
          flush();
        }
        goingAway = true;
      }
      if (now) {
        closeConnection();
      }
    }

    /** Closes the socket and cancels every call. On the loop. */
    void closeConnection() {
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        blocked.clear();
      }
      if (registration != null) {
        registration.cancel();
      }
      closeQuietly(ch);
      List<Call<?, ?>> open = new ArrayList<>(streams.values());
      streams.clear();
      for (Call<?, ?> c : open) {
        c.cancelled(Status.UNAVAILABLE.withDescription("the connection is closed"));
      }
      connections.remove(this);
      checkTerminated();
    }

    /** Runs a task on the loop after what runs there now (at once when the loop is gone). */
    void later(Runnable task) {
      try {
        loop.execute(task);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        task.run();
      }
    }

    void onLoop(Runnable task) {
      if (loop.inEventLoop()) {
        task.run();
      } else {
        try {
          loop.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
          task.run(); // the loop is gone: nothing else runs for this connection
        }
      }
    }

    // ------------------------------------------------------------ output, under the monitor

    private void writable() {
      synchronized (this) {
        waitingToWrite = false;
        flush();
        if (!waitingToWrite && !closed) {
          registration.submit(NioIoOps.READ);
        }
      }
      notifyReady();
    }

    /** Writes what the buffer holds, without blocking; the rest when the socket takes it. */
    void flush() {
      if (closed || out.position() == 0 || waitingToWrite || (batching && loop.inEventLoop())) {
        return;
      }
      write();
    }

    /**
     * A call closed: on the loop, while a read is being handled, its answer waits for the read's
     * other calls if some of their bytes are still in the buffer or the socket may hold more (the
     * read filled the buffer); otherwise it goes out now, in the one write the read would have made
     * after its last frame, and before whatever runs after {@code close} (the SDK reports the call
     * to its observers then: the metrics module's first report of a method builds its meters, about
     * 1 ms in the interpreter).
     */
    void flushClosed() {
      if (closed || out.position() == 0 || waitingToWrite) {
        return;
      }
      if (batching && loop.inEventLoop() && (in.hasRemaining() || !drained)) {
        return;
      }
      write();
    }

    private void write() {
      out.flip();
      try {
        ch.write(out);
      } catch (IOException e) {
        out.clear();
        LOG.debug("cannot write to a connection on {}: {}", path, e.toString());
        later(new ConnectionTask(this, ConnectionTask.CLOSE));
        return;
      }
      boolean rest = out.hasRemaining();
      out.compact();
      if (rest) {
        waitingToWrite = true; // the loop writes the rest when the socket takes it
        onLoop(new ConnectionTask(this, ConnectionTask.WANT_WRITE));
      }
    }

    /** On the loop. */
    void wantWrite() {
      synchronized (this) {
        if (!closed && waitingToWrite) {
          registration.submit(NioIoOps.READ_AND_WRITE);
        }
      }
    }

    private void ensure(int bytes) {
      if (out.remaining() < bytes) {
        ByteBuffer bigger =
            ByteBuffer.allocate(Math.max(out.capacity() * 2, out.position() + bytes));
        out.flip();
        bigger.put(out);
        out = bigger;
      }
    }

    void frameHeader(int length, int type, int flags, int stream) {
      ensure(HEADER + length);
      Http2Frames.putHeader(out, length, type, flags, stream);
    }

    void headerFrames(int stream, byte[] block, boolean endStream) {
      int flags = endStream ? END_STREAM : 0;
      if (block.length <= MAX_FRAME) {
        frameHeader(block.length, HEADERS, flags | END_HEADERS, stream);
        out.put(block);
        return;
      }
      for (int off = 0; off < block.length; off += MAX_FRAME) {
        int n = Math.min(MAX_FRAME, block.length - off);
        boolean last = off + n == block.length;
        frameHeader(
            n,
            off == 0 ? HEADERS : CONTINUATION,
            (last ? END_HEADERS : 0) | (off == 0 ? flags : 0),
            stream);
        out.put(block, off, n);
      }
    }

    void rstStream(int stream, int code) {
      frameHeader(4, RST_STREAM, 0, stream);
      out.putInt(code);
    }

    void windowUpdateFrame(int stream, int increment) {
      frameHeader(4, WINDOW_UPDATE, 0, stream);
      out.putInt(increment);
    }

    void goAwayFrame(int code, String debug) {
      byte[] d = debug == null ? new byte[0] : debug.getBytes(StandardCharsets.UTF_8);
      frameHeader(8 + d.length, GOAWAY, 0, 0);
      out.putInt(lastStream).putInt(code).put(d);
    }
  }

  // ------------------------------------------------------------------------------- calls

  /** One call (stream): a {@link ServerCall} to the handlers, its state to the connection. */
  private final class Call<Q, R> extends ServerCall<Q, R> {
    private final Connection conn;
    private final int id;
    private final MethodDescriptor<Q, R> method;
    private final Context.CancellableContext context;
    private final String authority;
    Listener<Q> listener;

    // Loop only: inbound.
    private byte[] inbound = new byte[0];
    private int inboundLength;
    private int receivedUnacked;
    private final ArrayDeque<byte[]> messages = new ArrayDeque<>(2);
    private int requested;
    private boolean remoteEnded;
    private boolean halfCloseDelivered;
    private boolean finished; // completed or cancelled, callbacks done

    // Under the connection's monitor: outbound.
    long sendWindow;
    private final ArrayDeque<byte[]> pending = new ArrayDeque<>(2);
    private int pendingOffset;
    private int pendingBytes;
    private byte[] trailers;
    private boolean headersSent;
    private boolean closeCalled;
    private boolean outClosed;
    private volatile boolean cancelled;
    boolean wasNotReady;

    Call(
        Connection conn,
        int id,
        MethodDescriptor<Q, R> method,
        Context.CancellableContext context,
        String authority) {
      this.conn = conn;
      this.id = id;
      this.method = method;
      this.context = context;
      this.authority = authority;
    }

    // ---- inbound, on the loop

    void received(byte[] bytes, int from, int length, int flowLength, boolean end) {
      if (length > 0) {
        if (inboundLength + length > inbound.length) {
          inbound =
              java.util.Arrays.copyOf(
                  inbound, Math.max(inbound.length * 2, inboundLength + length));
        }
        System.arraycopy(bytes, from, inbound, inboundLength, length);
        inboundLength += length;
      }
      if (!end && flowLength > 0) {
        receivedUnacked += flowLength;
        if (receivedUnacked >= WINDOW / 2) {
          synchronized (conn) {
            conn.windowUpdateFrame(id, receivedUnacked);
          }
          receivedUnacked = 0;
        }
      }
      int at = 0;
      while (inboundLength - at >= 5) {
        int size =
            (inbound[at + 1] & 0xff) << 24
                | (inbound[at + 2] & 0xff) << 16
                | (inbound[at + 3] & 0xff) << 8
                | inbound[at + 4] & 0xff;
        if (size < 0 || size > MAX_INBOUND_MESSAGE) {
          fail(
              Status.RESOURCE_EXHAUSTED.withDescription(
                  "gRPC message exceeds maximum size "
                      + MAX_INBOUND_MESSAGE
                      + ": "
                      + (size & 0xffffffffL)));
          return;
        }
        if (inbound[at] != 0) {
          fail(
              Status.UNIMPLEMENTED.withDescription(
                  "compressed messages are not supported by this server; send them uncompressed"));
          return;
        }
        if (inboundLength - at - 5 < size) {
          break;
        }
        messages.add(java.util.Arrays.copyOfRange(inbound, at + 5, at + 5 + size));
        at += 5 + size;
      }
      if (at > 0) {
        System.arraycopy(inbound, at, inbound, 0, inboundLength - at);
        inboundLength -= at;
      }
      if (end) {
        remoteEnded = true;
        if (inboundLength > 0) {
          fail(Status.INTERNAL.withDescription("the request ended inside a message"));
          return;
        }
      }
      deliver();
    }

    void requested(int numMessages) {
      requested += numMessages;
      deliver();
    }

    private void deliver() {
      while (!finished && listener != null && requested > 0 && !messages.isEmpty()) {
        requested--;
        byte[] message = messages.poll();
        Q request;
        try {
          request = method.parseRequest(new Bytes(message));
        } catch (RuntimeException e) {
          fail(Status.INTERNAL.withDescription("Invalid protobuf byte sequence").withCause(e));
          return;
        }
        callback(MESSAGE, request);
      }
      if (!finished
          && listener != null
          && remoteEnded
          && messages.isEmpty()
          && !halfCloseDelivered) {
        halfCloseDelivered = true;
        callback(HALF_CLOSE, null);
      }
    }

    /** Runs a listener callback in the call's context; a throwing listener fails the call. */
    @SuppressWarnings("unchecked")
    void callback(int what, Object message) {
      Listener<Q> l = listener;
      if (finished || l == null) {
        return;
      }
      Context previous = context.attach();
      try {
        switch (what) {
          case MESSAGE -> l.onMessage((Q) message);
          case HALF_CLOSE -> l.onHalfClose();
          case READY -> l.onReady();
          case CANCELLED -> l.onCancel();
          case COMPLETE -> l.onComplete();
          default -> throw new IllegalArgumentException("callback " + what);
        }
      } catch (RuntimeException | Error e) {
        failed(e);
      } finally {
        context.detach(previous);
      }
    }

    void failed(Throwable e) {
      LOG.warn("call {} failed in its handler: {}", method.getFullMethodName(), e.toString(), e);
      fail(Status.UNKNOWN.withDescription("Application error processing RPC").withCause(e));
    }

    /** Ends the call with an error of the server's, and tells the listener it was cancelled. */
    private void fail(Status status) {
      synchronized (conn) {
        if (!outClosed) {
          pending.clear();
          pendingBytes = 0;
          // closeCalled stays as it is: the handler may still answer (ignored, as after a
          // cancel), without an IllegalStateException of its own making
          outClosed = true;
          byte[] block = headersSent ? trailerBlock(status, null) : trailersOnly(200, status, null);
          conn.headerFrames(id, block, true);
          if (!remoteEnded) {
            conn.rstStream(id, NO_ERROR);
          }
          conn.flush();
        }
      }
      conn.streams.remove(id);
      cancelled(status);
    }

    /** The call is cancelled (reset, deadline, connection closed or failed): on the loop. */
    void cancelled(Status status) {
      cancelled = true;
      synchronized (conn) {
        outClosed = true;
        pending.clear();
        pendingBytes = 0;
        conn.blocked.remove(this);
      }
      if (finished) {
        return;
      }
      callback(CANCELLED, null);
      finished = true;
      context.cancel(status.asRuntimeException());
    }

    void deadlineExceeded(long timeoutNanos) {
      if (finished || conn.streams.get(id) != this) {
        return;
      }
      conn.streams.remove(id);
      synchronized (conn) {
        if (!outClosed) {
          conn.rstStream(id, CANCEL);
          conn.flush();
        }
      }
      cancelled(
          Status.DEADLINE_EXCEEDED.withDescription(
              "deadline exceeded after " + timeoutNanos + " ns"));
    }

    /** Trailers are written: the call completed. On the loop. */
    private void completed() {
      if (conn.streams.get(id) == this) {
        conn.streams.remove(id);
      }
      if (finished) {
        return;
      }
      callback(COMPLETE, null);
      finished = true;
      context.cancel(null);
    }

    // ---- ServerCall, from any thread

    @Override
    public void request(int numMessages) {
      if (loop.inEventLoop()) {
        requested(numMessages);
      } else {
        conn.onLoop(new CallTask(this, CallTask.REQUEST, numMessages));
      }
    }

    @Override
    public void sendHeaders(Metadata headers) {
      synchronized (conn) {
        if (headersSent || closeCalled) {
          throw new IllegalStateException("sendHeaders has already been called");
        }
        headersSent = true;
        if (outClosed) {
          return;
        }
        byte[] block =
            headers == null || InternalMetadata.headerCount(headers) == 0
                ? RESPONSE_HEADERS
                : withMetadata(RESPONSE_HEADERS, headers);
        conn.headerFrames(id, block, false);
        conn.flush();
      }
    }

    @Override
    public void sendMessage(R message) {
      byte[] framed = frame(message);
      synchronized (conn) {
        if (!headersSent) {
          throw new IllegalStateException("sendHeaders has not been called");
        }
        if (closeCalled) {
          throw new IllegalStateException("call is closed");
        }
        if (outClosed) {
          return;
        }
        pending.add(framed);
        pendingBytes += framed.length;
        writePending();
        conn.flush();
      }
    }

    private byte[] frame(R message) {
      try (InputStream s = method.streamResponse(message)) {
        int size = s.available();
        byte[] framed;
        if (s instanceof KnownLength) {
          framed = new byte[5 + size];
          int at = 5;
          while (at < framed.length) {
            int n = s.read(framed, at, framed.length - at);
            if (n < 0) {
              break;
            }
            at += n;
          }
        } else {
          byte[] body = s.readAllBytes();
          size = body.length;
          framed = new byte[5 + size];
          System.arraycopy(body, 0, framed, 5, size);
        }
        framed[1] = (byte) (size >>> 24);
        framed[2] = (byte) (size >>> 16);
        framed[3] = (byte) (size >>> 8);
        framed[4] = (byte) size;
        return framed;
      } catch (IOException e) {
        throw Status.INTERNAL
            .withDescription("cannot serialize the answer")
            .withCause(e)
            .asRuntimeException();
      }
    }

    /** Writes what the windows allow, then the trailers when all is written. Under the monitor. */
    void writePending() {
      while (!pending.isEmpty()) {
        byte[] head = pending.peek();
        int n =
            (int)
                Math.min(
                    Math.min(head.length - pendingOffset, MAX_FRAME),
                    Math.min(conn.sendWindow, sendWindow));
        if (n <= 0) {
          if (conn.sendWindow <= 0) {
            conn.blocked.add(this);
          }
          return;
        }
        conn.frameHeader(n, DATA, 0, id);
        conn.out.put(head, pendingOffset, n);
        conn.sendWindow -= n;
        sendWindow -= n;
        pendingBytes -= n;
        pendingOffset += n;
        if (pendingOffset == head.length) {
          pending.poll();
          pendingOffset = 0;
        }
      }
      if (trailers != null && !outClosed) {
        conn.headerFrames(id, trailers, true);
        trailers = null;
        outClosed = true;
        if (!remoteEnded) {
          conn.rstStream(id, NO_ERROR);
        }
        conn.later(new CallTask(this, CallTask.COMPLETED, 0));
      }
    }

    @Override
    public void close(Status status, Metadata trailerMetadata) {
      synchronized (conn) {
        if (closeCalled) {
          throw new IllegalStateException("call already closed");
        }
        closeCalled = true;
        if (outClosed) {
          return;
        }
        if (!headersSent) {
          pending.clear();
          pendingBytes = 0;
          trailers = trailersOnly(200, status, trailerMetadata);
        } else {
          trailers =
              status.isOk()
                      && (trailerMetadata == null
                          || InternalMetadata.headerCount(trailerMetadata) == 0)
                  ? OK_TRAILERS
                  : trailerBlock(status, trailerMetadata);
        }
        writePending();
        conn.flushClosed();
      }
    }

    @Override
    public boolean isReady() {
      synchronized (conn) {
        boolean ready =
            !outClosed && pendingBytes + conn.out.position() < ON_READY_THRESHOLD && !conn.closed;
        if (!ready) {
          wasNotReady = true;
          conn.someNotReady = true;
        }
        return ready;
      }
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public MethodDescriptor<Q, R> getMethodDescriptor() {
      return method;
    }

    @Override
    public Attributes getAttributes() {
      return conn.attributes;
    }

    @Override
    public String getAuthority() {
      return authority;
    }
  }

  // Listener callbacks, by kind (Call.callback).
  private static final int MESSAGE = 0;
  private static final int HALF_CLOSE = 1;
  private static final int READY = 2;
  private static final int CANCELLED = 3;
  private static final int COMPLETE = 4;

  // The tasks below are classes, not lambdas: a lambda not met by the image's training run is
  // spun at its first use (several ms in the interpreter, on the event loop), and some of these
  // run only on rare paths (a write failing, a deadline, a client that connects and leaves).

  /** A call's task for the loop. */
  private static final class CallTask implements Runnable {
    static final int COMPLETED = 0;
    static final int REQUEST = 1;
    static final int DEADLINE = 2;

    private final Call<?, ?> call;
    private final int what;
    private final long value;

    CallTask(Call<?, ?> call, int what, long value) {
      this.call = call;
      this.what = what;
      this.value = value;
    }

    @Override
    public void run() {
      switch (what) {
        case COMPLETED -> call.completed();
        case REQUEST -> call.requested((int) value);
        case DEADLINE -> call.deadlineExceeded(value);
        default -> throw new IllegalStateException("task " + what);
      }
    }
  }

  /** A connection's task for the loop. */
  private static final class ConnectionTask implements Runnable {
    static final int CLOSE = 0;
    static final int WANT_WRITE = 1;
    static final int GO_AWAY = 2;
    static final int GO_AWAY_NOW = 3;

    private final Connection connection;
    private final int what;

    ConnectionTask(Connection connection, int what) {
      this.connection = connection;
      this.what = what;
    }

    @Override
    public void run() {
      switch (what) {
        case CLOSE -> connection.closeConnection();
        case WANT_WRITE -> connection.wantWrite();
        case GO_AWAY -> connection.goAwayNow(false);
        case GO_AWAY_NOW -> connection.goAwayNow(true);
        default -> throw new IllegalStateException("task " + what);
      }
    }
  }

  /** Resets a call when its context's deadline passes. */
  private static final class DeadlineListener implements Context.CancellationListener {
    private final Call<?, ?> call;
    private final long timeoutNanos;

    DeadlineListener(Call<?, ?> call, long timeoutNanos) {
      this.call = call;
      this.timeoutNanos = timeoutNanos;
    }

    @Override
    public void cancelled(Context context) {
      if (context.cancellationCause() instanceof java.util.concurrent.TimeoutException) {
        call.conn.onLoop(new CallTask(call, CallTask.DEADLINE, timeoutNanos));
      }
    }
  }

  /** Runs a task on the calling thread. */
  private static final class Direct implements java.util.concurrent.Executor {
    @Override
    public void execute(Runnable task) {
      task.run();
    }
  }

  private static final java.util.concurrent.Executor DIRECT = new Direct();

  // ------------------------------------------------------------------------------- encoding

  /** A request message for the marshaller: its length known, so protobuf reads it in one go. */
  private static final class Bytes extends ByteArrayInputStream implements KnownLength {
    Bytes(byte[] b) {
      super(b);
    }
  }

  private static Metadata metadata(Http2Headers headers) {
    List<byte[]> raw = new ArrayList<>(headers.size() * 2);
    for (Map.Entry<CharSequence, CharSequence> e : headers) {
      CharSequence name = e.getKey();
      if (name.length() == 0 || name.charAt(0) == ':') {
        continue;
      }
      String n = name.toString();
      byte[] value;
      if (n.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        try {
          value = Base64.getDecoder().decode(e.getValue().toString());
        } catch (IllegalArgumentException bad) {
          continue; // not base64: dropped, as grpc-java drops it
        }
      } else {
        value = e.getValue().toString().getBytes(StandardCharsets.US_ASCII);
      }
      raw.add(n.getBytes(StandardCharsets.US_ASCII));
      raw.add(value);
    }
    return InternalMetadata.newMetadata(raw.toArray(new byte[0][]));
  }

  /** {@code grpc-timeout}: up to 8 digits and a unit; -1 when it cannot be read. */
  static long parseTimeout(CharSequence value) {
    int n = value.length();
    if (n < 2 || n > 9) {
      return -1;
    }
    long amount = 0;
    for (int i = 0; i < n - 1; i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      amount = amount * 10 + (c - '0');
    }
    return switch (value.charAt(n - 1)) {
      case 'n' -> amount;
      case 'u' -> TimeUnit.MICROSECONDS.toNanos(amount);
      case 'm' -> TimeUnit.MILLISECONDS.toNanos(amount);
      case 'S' -> TimeUnit.SECONDS.toNanos(amount);
      case 'M' -> TimeUnit.MINUTES.toNanos(amount);
      case 'H' -> TimeUnit.HOURS.toNanos(amount);
      default -> -1;
    };
  }

  private static byte[] responseHeaders() {
    HeaderBlock b = new HeaderBlock();
    b.indexed(8); // :status 200
    b.literalIndexedName(31, "application/grpc"); // content-type
    return b.bytes();
  }

  private static byte[] okTrailers() {
    HeaderBlock b = new HeaderBlock();
    b.literal("grpc-status", "0");
    return b.bytes();
  }

  private static byte[] serverPreface() {
    ByteBuffer b = ByteBuffer.allocate(HEADER + 12 + HEADER + 4);
    b.put(new byte[] {0, 0, 12, SETTINGS, 0, 0, 0, 0, 0});
    b.putShort((short) 0x4).putInt(WINDOW); // INITIAL_WINDOW_SIZE
    b.putShort((short) 0x6).putInt(MAX_HEADER_LIST); // MAX_HEADER_LIST_SIZE
    b.put(new byte[] {0, 0, 4, WINDOW_UPDATE, 0, 0, 0, 0, 0});
    b.putInt(WINDOW - DEFAULT_WINDOW);
    return b.array();
  }

  private static byte[] withMetadata(byte[] base, Metadata md) {
    HeaderBlock b = new HeaderBlock();
    b.raw(base);
    b.metadata(md);
    return b.bytes();
  }

  static byte[] trailerBlock(Status status, Metadata md) {
    HeaderBlock b = new HeaderBlock();
    b.status(status);
    b.metadata(md);
    return b.bytes();
  }

  static byte[] trailersOnly(int httpStatus, Status status, Metadata md) {
    HeaderBlock b = new HeaderBlock();
    if (httpStatus == 200) {
      b.raw(RESPONSE_HEADERS);
    } else {
      b.literalIndexedName(8, Integer.toString(httpStatus)); // :status
      b.literalIndexedName(31, "application/grpc");
    }
    b.status(status);
    b.metadata(md);
    return b.bytes();
  }

  /** An HPACK header block that never touches the dynamic table and uses no Huffman coding. */
  private static final class HeaderBlock {
    private byte[] buf = new byte[128];
    private int len;

    void raw(byte[] b) {
      put(b, 0, b.length);
    }

    void indexed(int index) {
      integer(index, 7, 0x80);
    }

    void literalIndexedName(int index, String value) {
      integer(index, 4, 0x00); // literal without indexing, indexed name
      string(value.getBytes(StandardCharsets.UTF_8));
    }

    void literal(String name, String value) {
      literal(name.getBytes(StandardCharsets.US_ASCII), value.getBytes(StandardCharsets.UTF_8));
    }

    void literal(byte[] name, byte[] value) {
      byteOut(0x00);
      string(name);
      string(value);
    }

    void status(Status status) {
      literal("grpc-status", Integer.toString(status.getCode().value()));
      String description = status.getDescription();
      if (description != null) {
        literal("grpc-message".getBytes(StandardCharsets.US_ASCII), percentEncode(description));
      }
    }

    void metadata(Metadata md) {
      if (md == null) {
        return;
      }
      byte[][] pairs = InternalMetadata.serialize(md);
      for (int i = 0; i + 1 < pairs.length; i += 2) {
        String name = new String(pairs[i], StandardCharsets.US_ASCII);
        if (name.startsWith(":")
            || name.equals("content-type")
            || name.equals("grpc-status")
            || name.equals("grpc-message")
            || name.equals("grpc-encoding")
            || name.equals("grpc-accept-encoding")) {
          continue;
        }
        byte[] value =
            name.endsWith(Metadata.BINARY_HEADER_SUFFIX)
                ? Base64.getEncoder()
                    .withoutPadding()
                    .encodeToString(pairs[i + 1])
                    .getBytes(StandardCharsets.US_ASCII)
                : pairs[i + 1];
        literal(pairs[i], value);
      }
    }

    private void string(byte[] s) {
      integer(s.length, 7, 0x00);
      put(s, 0, s.length);
    }

    private void integer(int value, int prefixBits, int mask) {
      int max = (1 << prefixBits) - 1;
      if (value < max) {
        byteOut(mask | value);
        return;
      }
      byteOut(mask | max);
      int rest = value - max;
      while (rest >= 128) {
        byteOut((rest & 0x7f) | 0x80);
        rest >>>= 7;
      }
      byteOut(rest);
    }

    private void byteOut(int b) {
      if (len == buf.length) {
        buf = java.util.Arrays.copyOf(buf, len * 2);
      }
      buf[len++] = (byte) b;
    }

    private void put(byte[] b, int from, int n) {
      if (len + n > buf.length) {
        buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
      }
      System.arraycopy(b, from, buf, len, n);
      len += n;
    }

    byte[] bytes() {
      return java.util.Arrays.copyOf(buf, len);
    }
  }

  /** A {@code grpc-message}: printable ASCII but {@code %} as is, every other byte {@code %XX}. */
  static byte[] percentEncode(String message) {
    byte[] utf8 = message.getBytes(StandardCharsets.UTF_8);
    int escapes = 0;
    for (byte b : utf8) {
      if (b < 0x20 || b >= 0x7f || b == '%') {
        escapes++;
      }
    }
    if (escapes == 0) {
      return utf8;
    }
    byte[] out = new byte[utf8.length + 2 * escapes];
    int j = 0;
    for (byte b : utf8) {
      if (b < 0x20 || b >= 0x7f || b == '%') {
        out[j++] = '%';
        out[j++] = (byte) Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16));
        out[j++] = (byte) Character.toUpperCase(Character.forDigit(b & 0xf, 16));
      } else {
        out[j++] = b;
      }
    }
    return out;
  }
}
