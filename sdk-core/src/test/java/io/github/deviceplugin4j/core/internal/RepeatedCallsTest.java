package io.github.deviceplugin4j.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCalls;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The socket warm-up's client against a real server over a real Unix socket: the SDK's own server
 * and grpc-java's ({@code -Ddeviceplugin4j.server=grpc}), so the frames it writes are HTTP/2 and
 * gRPC that a third party accepts.
 */
class RepeatedCallsTest {

  private static final String SERVICE = "test.Echo";
  private static final long LONG = TimeUnit.SECONDS.toNanos(30);

  @TempDir Path dir;
  private EventLoopGroup loop;
  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  private final List<String> received = new CopyOnWriteArrayList<>();
  private UdsServer.Standby server;
  private String before;

  @BeforeEach
  void setUp() {
    loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    before = System.getProperty(UdsServer.SERVER_PROPERTY);
  }

  @AfterEach
  void tearDown() throws Exception {
    if (server != null) {
      server.discard();
    }
    if (before == null) {
      System.clearProperty(UdsServer.SERVER_PROPERTY);
    } else {
      System.setProperty(UdsServer.SERVER_PROPERTY, before);
    }
    timer.shutdownNow();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private static MethodDescriptor<byte[], byte[]> method(String name) {
    return MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
        .setRequestMarshaller(BYTES)
        .setResponseMarshaller(BYTES)
        .build();
  }

  /**
   * Echo answers its request; Big answers a message of the size its request names; Fail answers
   * INTERNAL; Hang never answers.
   */
  private Path serve(String which) throws IOException {
    System.setProperty(UdsServer.SERVER_PROPERTY, which);
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(SERVICE)
            .addMethod(
                method("Echo"),
                ServerCalls.asyncUnaryCall(
                    (request, out) -> {
                      received.add("Echo:" + new String(request, StandardCharsets.UTF_8));
                      out.onNext(request);
                      out.onCompleted();
                    }))
            .addMethod(
                method("Big"),
                ServerCalls.asyncUnaryCall(
                    (request, out) -> {
                      received.add("Big");
                      byte[] answer =
                          new byte[Integer.parseInt(new String(request, StandardCharsets.UTF_8))];
                      Arrays.fill(answer, (byte) 'x');
                      out.onNext(answer);
                      out.onCompleted();
                    }))
            .addMethod(
                method("Fail"),
                ServerCalls.asyncUnaryCall(
                    (request, out) -> {
                      received.add("Fail");
                      out.onError(Status.INTERNAL.withDescription("refused").asRuntimeException());
                    }))
            .addMethod(
                method("Hang"), ServerCalls.asyncUnaryCall((request, out) -> received.add("Hang")))
            .build();
    server =
        UdsServer.bind(dir, PosixFilePermissions.fromString("rw-------"), List.of(service), loop);
    return server.path();
  }

  private static RepeatedCalls.Kind kind(String method, String request) {
    return new RepeatedCalls.Kind(SERVICE + "/" + method, request.getBytes(StandardCharsets.UTF_8));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "grpc"})
  void makesTheCallsWithTheKindsInTurn_andCountsEachAnswer(String which) throws Exception {
    Path socket = serve(which);

    RepeatedCalls.Outcome outcome =
        RepeatedCalls.run(
            socket, List.of(kind("Echo", "a"), kind("Echo", "b")), 7, LONG, LONG, timer);

    assertThat(outcome.answered()).isEqualTo(7);
    assertThat(outcome.outOfTime()).isFalse();
    assertThat(received)
        .containsExactly("Echo:a", "Echo:b", "Echo:a", "Echo:b", "Echo:a", "Echo:b", "Echo:a");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "grpc"})
  void answersPastTheConnectionWindowKeepComing_itsWindowIsReturned(String which) throws Exception {
    Path socket = serve(which);

    // 300 answers of 8 KiB: 2.4 MiB, more than twice the 1 MiB connection window announced.
    RepeatedCalls.Outcome outcome =
        RepeatedCalls.run(socket, List.of(kind("Big", "8192")), 300, LONG, LONG, timer);

    assertThat(outcome.answered()).isEqualTo(300);
    assertThat(received).hasSize(300);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "grpc"})
  void aCallAnsweredWithAnErrorStatusEndsTheRun_withAnErrorThatSaysSo(String which)
      throws Exception {
    Path socket = serve(which);

    assertThatThrownBy(
            () ->
                RepeatedCalls.run(
                    socket, List.of(kind("Echo", "a"), kind("Fail", "")), 10, LONG, LONG, timer))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("stream 3 ended without an answer");
    assertThat(received).containsExactly("Echo:a", "Fail");
  }

  @Test
  void theBudgetStopsNewCalls_theFirstAlwaysRuns() throws Exception {
    Path socket = serve("");

    RepeatedCalls.Outcome outcome =
        RepeatedCalls.run(socket, List.of(kind("Echo", "a")), 50, 0, LONG, timer);

    assertThat(outcome.answered()).isEqualTo(1);
    assertThat(outcome.outOfTime()).isTrue();
    assertThat(received).containsExactly("Echo:a");
  }

  @Test
  void aServerThatStopsAnsweringIsCutOffAtTheDeadline() throws Exception {
    Path socket = serve("");

    assertCutOffWithin300Ms(socket, kind("Hang", ""));
    assertThat(received).containsExactly("Hang");
  }

  /** Three calls of {@code kind} with a 300 ms deadline end in an IOException well within 20 s. */
  private void assertCutOffWithin300Ms(Path socket, RepeatedCalls.Kind kind) {
    long deadline = TimeUnit.MILLISECONDS.toNanos(300);
    assertTimeoutPreemptively(
        Duration.ofSeconds(20),
        () ->
            assertThatThrownBy(
                    () -> RepeatedCalls.run(socket, List.of(kind), 3, LONG, deadline, timer))
                .isInstanceOf(IOException.class));
  }

  @Test
  void anUnreachableSocketIsAnIoError_andTooLargeARequestIsRefusedBeforeConnecting() {
    Path missing = dir.resolve("missing.sock");

    assertThatThrownBy(
            () -> RepeatedCalls.run(missing, List.of(kind("Echo", "a")), 1, LONG, LONG, timer))
        .isInstanceOf(IOException.class);
    RepeatedCalls.Kind huge = new RepeatedCalls.Kind(SERVICE + "/Echo", new byte[16_380]);
    assertThatThrownBy(() -> RepeatedCalls.run(missing, List.of(huge), 1, LONG, LONG, timer))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("16380 bytes does not fit one frame (16379 at most)");
    assertThat(Files.exists(missing)).isFalse();
  }

  @Test
  void eachAnswerIsFollowedByAPing_theNextCallWaitsForItsAck_andEveryPathIsAHuffmanCodedLiteral()
      throws Exception {
    List<Http2Headers> decoded = new ArrayList<>();
    List<byte[]> blocks;
    List<String> sequence;
    try (RawPeer peer = new RawPeer(dir.resolve("raw.sock"), true)) {
      RepeatedCalls.Outcome outcome =
          RepeatedCalls.run(
              peer.path, List.of(kind("Echo", "a"), kind("Other", "b")), 4, LONG, LONG, timer);

      assertThat(outcome.answered()).isEqualTo(4);
      blocks = peer.awaitBlocks(4);
      sequence = peer.callFrames();
    }
    // The peer answers each ping before it reads on: a call's frames came only after the ack.
    assertThat(sequence)
        .containsExactly(
            "HEADERS 1",
            "DATA 1",
            "PING",
            "HEADERS 3",
            "DATA 3",
            "PING",
            "HEADERS 5",
            "DATA 5",
            "PING",
            "HEADERS 7",
            "DATA 7",
            "PING");
    DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(false);
    for (int i = 0; i < blocks.size(); i++) {
      decoded.add(decoder.decodeHeaders(2 * i + 1, Unpooled.wrappedBuffer(blocks.get(i))));
    }
    assertThat(decoded)
        .extracting(h -> h.path().toString())
        .containsExactly(
            "/test.Echo/Echo", "/test.Echo/Other", "/test.Echo/Echo", "/test.Echo/Other");
    for (byte[] block : blocks) {
      // A literal never indexed, named by static entry 4 (:path), its value Huffman-coded (the
      // length's high bit): in every request, not only until it entered the dynamic table.
      assertThat(indexOfPathLiteral(block)).as(Arrays.toString(block)).isNotNegative();
      assertThat(new String(block, StandardCharsets.ISO_8859_1)).doesNotContain("test.Echo");
    }
  }

  @Test
  void aServerThatNeverAcknowledgesThePingIsCutOffAtTheDeadline_beforeAnotherCall()
      throws Exception {
    try (RawPeer peer = new RawPeer(dir.resolve("raw.sock"), false)) {
      assertCutOffWithin300Ms(peer.path, kind("Echo", "a"));
      peer.awaitBlocks(1);
      assertThat(peer.callFrames()).containsExactly("HEADERS 1", "DATA 1", "PING");
    }
  }

  /** Where {@code 0x14, 0x80 | n} starts a never-indexed :path literal with a Huffman value. */
  private static int indexOfPathLiteral(byte[] block) {
    for (int i = 0; i + 1 < block.length; i++) {
      if (block[i] == 0x14 && (block[i + 1] & 0x80) != 0) {
        return i;
      }
    }
    return -1;
  }

  /**
   * A hand-written HTTP/2 peer on a real Unix socket: it records the frames a client sends, answers
   * each call (headers, a one-byte message, trailers) once its request ended, and answers a PING
   * only when told to, so what the client does between calls can be seen.
   */
  private static final class RawPeer implements AutoCloseable {
    final Path path;
    private final boolean ackPings;
    private final ServerSocketChannel server;
    private final Thread thread;
    private final List<String> frames = new CopyOnWriteArrayList<>();
    private final List<byte[]> blocks = new CopyOnWriteArrayList<>();

    RawPeer(Path path, boolean ackPings) throws IOException {
      this.path = path;
      this.ackPings = ackPings;
      this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      server.bind(UnixDomainSocketAddress.of(path));
      this.thread = new Thread(this::serve, "raw-peer");
      thread.start();
    }

    /** The frames of calls and pings, in the order they came. */
    List<String> callFrames() {
      List<String> out = new ArrayList<>();
      for (String f : frames) {
        if (f.startsWith("HEADERS") || f.startsWith("DATA") || f.equals("PING")) {
          out.add(f);
        }
      }
      return out;
    }

    List<byte[]> awaitBlocks(int n) throws InterruptedException {
      thread.join(TimeUnit.SECONDS.toMillis(20));
      assertThat(thread.isAlive()).as("the peer ended when the client closed").isFalse();
      assertThat(blocks).hasSize(n);
      return List.copyOf(blocks);
    }

    private void serve() {
      try (SocketChannel ch = server.accept()) {
        readFully(ch, Http2Frames.PREFACE.length);
        write(ch, Http2Frames.SETTINGS, 0, 0, new byte[0]);
        while (true) {
          ByteBuffer header = readFully(ch, Http2Frames.HEADER);
          if (header == null) {
            return;
          }
          int length = Http2Frames.length(header, 0);
          int type = Http2Frames.type(header, 0);
          int flags = Http2Frames.flags(header, 0);
          int stream = Http2Frames.stream(header, 0);
          ByteBuffer payload = readFully(ch, length);
          if (payload == null) {
            return;
          }
          byte[] bytes = payload.array();
          switch (type) {
            case Http2Frames.HEADERS -> {
              frames.add("HEADERS " + stream);
              blocks.add(bytes);
            }
            case Http2Frames.DATA -> {
              frames.add("DATA " + stream);
              if ((flags & Http2Frames.END_STREAM) != 0) {
                answer(ch, stream);
              }
            }
            case Http2Frames.PING -> {
              if ((flags & Http2Frames.ACK) == 0) {
                frames.add("PING");
                if (ackPings) {
                  write(ch, Http2Frames.PING, Http2Frames.ACK, 0, bytes);
                }
              }
            }
            case Http2Frames.SETTINGS -> {
              if ((flags & Http2Frames.ACK) == 0) {
                write(ch, Http2Frames.SETTINGS, Http2Frames.ACK, 0, new byte[0]);
              }
            }
            default -> frames.add("type " + type);
          }
        }
      } catch (IOException e) {
        // the client closed the connection (at its deadline) or the test ended
      }
    }

    private static void answer(SocketChannel ch, int stream) throws IOException {
      byte[] status200 = {(byte) 0x88};
      write(ch, Http2Frames.HEADERS, Http2Frames.END_HEADERS, stream, status200);
      write(ch, Http2Frames.DATA, 0, stream, new byte[] {0, 0, 0, 0, 1, 'x'});
      byte[] name = "grpc-status".getBytes(StandardCharsets.US_ASCII);
      ByteBuffer trailers = ByteBuffer.allocate(3 + name.length + 1);
      trailers.put((byte) 0).put((byte) name.length).put(name).put((byte) 1).put((byte) '0');
      write(
          ch,
          Http2Frames.HEADERS,
          Http2Frames.END_HEADERS | Http2Frames.END_STREAM,
          stream,
          trailers.array());
    }

    private static void write(SocketChannel ch, int type, int flags, int stream, byte[] payload)
        throws IOException {
      ByteBuffer out = ByteBuffer.allocate(Http2Frames.HEADER + payload.length);
      Http2Frames.putHeader(out, payload.length, type, flags, stream);
      out.put(payload).flip();
      while (out.hasRemaining()) {
        ch.write(out);
      }
    }

    /** The next {@code n} bytes, or null when the client closed the connection first. */
    private static ByteBuffer readFully(SocketChannel ch, int n) throws IOException {
      ByteBuffer b = ByteBuffer.allocate(n);
      while (b.hasRemaining()) {
        if (ch.read(b) < 0) {
          return null;
        }
      }
      return b.flip();
    }

    @Override
    public void close() throws IOException, InterruptedException {
      server.close();
      thread.interrupt();
      thread.join(TimeUnit.SECONDS.toMillis(20));
    }
  }
}
