package io.github.deviceplugin4j.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
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
    long deadline = TimeUnit.MILLISECONDS.toNanos(300);

    assertTimeoutPreemptively(
        Duration.ofSeconds(20),
        () ->
            assertThatThrownBy(
                    () ->
                        RepeatedCalls.run(
                            socket, List.of(kind("Hang", "")), 3, LONG, deadline, timer))
                .isInstanceOf(IOException.class));
    assertThat(received).containsExactly("Hang");
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
}
