package io.github.deviceplugin4j.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Register call's own HTTP/2 client against a real grpc-java server on a Unix socket: the
 * request as the server decodes it, and every outcome LegacyRegister tells apart.
 */
class UnaryCallTest {

  private static final String REGISTER = RegistrationGrpc.getRegisterMethod().getFullMethodName();
  private static final Duration LONG = Duration.ofSeconds(10);

  private EventLoopGroup group;
  private ExecutorService readers;
  private ScheduledExecutorService timer;
  private Path dir;
  private Path socket;
  private UdsServer server;

  @BeforeEach
  void setUp() throws Exception {
    group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    readers = Executors.newCachedThreadPool();
    timer = Executors.newSingleThreadScheduledExecutor();
    dir = Files.createTempDirectory(Path.of("/tmp"), "ucall");
    socket = dir.resolve("kubelet.sock");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (server != null) {
      server.close(2000);
    }
    readers.shutdownNow();
    timer.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    try (var files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** Serves a Registration service whose Register does what {@code answer} says. */
  private void serve(BiConsumer<RegisterRequest, StreamObserver<Empty>> answer) throws Exception {
    RegistrationGrpc.RegistrationImplBase service =
        new RegistrationGrpc.RegistrationImplBase() {
          @Override
          public void register(RegisterRequest request, StreamObserver<Empty> observer) {
            answer.accept(request, observer);
          }
        };
    server =
        UdsServer.start(
            socket,
            PosixFilePermissions.fromString("rw-------"),
            List.of(service.bindService()),
            group,
            null);
  }

  private static byte[] request(String resource) {
    return RegisterRequest.newBuilder()
        .setVersion("v1beta1")
        .setEndpoint("fpga.sock")
        .setResourceName(resource)
        .setOptions(DevicePluginOptions.newBuilder().setPreStartRequired(true))
        .build()
        .toByteArray();
  }

  private UnaryCall call(String method, byte[] message, Duration deadline) {
    return UnaryCall.start(socket, method, message, deadline, readers, timer);
  }

  private static Status statusOf(CompletableFuture<byte[]> result) {
    assertThatThrownBy(() -> result.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(StatusRuntimeException.class);
    return Status.fromThrowable(result.handle((ok, e) -> e).join());
  }

  @Test
  void theServerDecodesTheRequestAndItsDeadline_andTheAnswerIsItsMessage() throws Exception {
    AtomicReference<RegisterRequest> received = new AtomicReference<>();
    AtomicReference<Deadline> deadline = new AtomicReference<>();
    serve(
        (request, observer) -> {
          received.set(request);
          deadline.set(Context.current().getDeadline());
          observer.onNext(Empty.getDefaultInstance());
          observer.onCompleted();
        });

    byte[] answer = call(REGISTER, request("example.com/fpga"), LONG).result().get(10, SECONDS);

    assertThat(Empty.parseFrom(answer)).isEqualTo(Empty.getDefaultInstance());
    assertThat(received.get()).isEqualTo(RegisterRequest.parseFrom(request("example.com/fpga")));
    assertThat(deadline.get()).isNotNull();
    assertThat(deadline.get().timeRemaining(TimeUnit.MILLISECONDS)).isBetween(1L, 10_000L);
  }

  @Test
  void manyCallsInARow_eachOnItsOwnConnection() throws Exception {
    AtomicReference<String> last = new AtomicReference<>();
    serve(
        (request, observer) -> {
          last.set(request.getResourceName());
          observer.onNext(Empty.getDefaultInstance());
          observer.onCompleted();
        });
    for (int i = 0; i < 50; i++) {
      call(REGISTER, request("example.com/r" + i), LONG).result().get(10, SECONDS);
      assertThat(last.get()).isEqualTo("example.com/r" + i);
    }
  }

  @Test
  void anErrorKeepsItsCodeAndItsMessage_percentEncodingUndone() throws Exception {
    String refusal = "requested API version \"v9\" is not supported by kubelet: 100% sure, été";
    serve(
        (request, observer) ->
            observer.onError(Status.INVALID_ARGUMENT.withDescription(refusal).asException()));

    Status status = statusOf(call(REGISTER, request("example.com/fpga"), LONG).result());

    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).isEqualTo(refusal);
  }

  @Test
  void aLongErrorMessageArrivesWhole() throws Exception {
    String reason = "x".repeat(20_000); // over HPACK's usual 8 KiB header list limit
    serve(
        (request, observer) ->
            observer.onError(Status.FAILED_PRECONDITION.withDescription(reason).asException()));

    Status status = statusOf(call(REGISTER, request("example.com/fpga"), LONG).result());

    assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(status.getDescription()).isEqualTo(reason);
  }

  @Test
  void anUnknownMethodIsUnimplemented() throws Exception {
    serve((request, observer) -> observer.onCompleted());

    Status status = statusOf(call("v1beta1.Registration/Nope", new byte[0], LONG).result());

    assertThat(status.getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
  }

  @Test
  void noSocketFileIsUnavailable_namingThePath() {
    Status status = statusOf(call(REGISTER, request("example.com/fpga"), LONG).result());

    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription()).contains(socket.toString());
    // No file is no kubelet: the Register is not retried at once, the backoff applies.
    assertThat(LegacyRegister.isRefusedConnection(status)).isFalse();
  }

  @Test
  void aSocketNobodyListensOnIsUnavailable() throws Exception {
    try (ServerSocketChannel stale = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      stale.bind(UnixDomainSocketAddress.of(socket));
    } // closed: the file stays, nobody accepts

    Status status = statusOf(call(REGISTER, request("example.com/fpga"), LONG).result());

    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    // A file nobody listens on yet, as kubelet.sock between the kubelet's bind and its listen:
    // LegacyRegister retries it within a fraction of a second instead of after the backoff.
    assertThat(LegacyRegister.isRefusedConnection(status)).isTrue();
  }

  @Test
  void aServerThatClosesWithoutAnsweringIsUnavailable() throws Exception {
    try (ServerSocketChannel rude = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      rude.bind(UnixDomainSocketAddress.of(socket));
      UnaryCall call = call(REGISTER, request("example.com/fpga"), LONG);
      try (SocketChannel accepted = rude.accept()) {
        assertThat(accepted).isNotNull();
      }

      Status status = statusOf(call.result());

      assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      // Closed with the request unread: a reset, or the end of the stream.
      assertThat(status.getDescription()).contains(socket.toString()).contains("before");
    }
  }

  @Test
  void noAnswerWithinTheDeadlineIsDeadlineExceeded_andTheServerSeesTheCallEnd() throws Exception {
    AtomicReference<Context> serverSide = new AtomicReference<>();
    serve((request, observer) -> serverSide.set(Context.current())); // never answers

    long start = System.nanoTime();
    Status status = statusOf(call(REGISTER, request("example.com/fpga"), ofMillis(300)).result());

    assertThat(status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(ofMillis(300).toNanos());
    await().atMost(10, SECONDS).until(() -> serverSide.get() != null);
    await().atMost(10, SECONDS).until(() -> serverSide.get().isCancelled());
  }

  @Test
  void cancelEndsTheCallAtOnce_andTheServerSeesIt() throws Exception {
    AtomicReference<Context> serverSide = new AtomicReference<>();
    serve((request, observer) -> serverSide.set(Context.current())); // never answers
    UnaryCall call = call(REGISTER, request("example.com/fpga"), LONG);
    await().atMost(10, SECONDS).until(() -> serverSide.get() != null);

    call.cancel();

    assertThat(statusOf(call.result()).getCode()).isEqualTo(Status.Code.CANCELLED);
    await().atMost(10, SECONDS).until(() -> serverSide.get().isCancelled());
  }

  @Test
  void aServerStoppingDuringTheCallEndsItAsUnreachable() throws Exception {
    AtomicReference<Context> serverSide = new AtomicReference<>();
    serve((request, observer) -> serverSide.set(Context.current())); // never answers
    UnaryCall call = call(REGISTER, request("example.com/fpga"), LONG);
    await().atMost(10, SECONDS).until(() -> serverSide.get() != null);

    server.close(2000);
    server = null;

    // What LegacyRegister takes for a kubelet going away (not a refusal to register).
    assertThat(statusOf(call.result()).getCode())
        .isIn(Status.Code.UNAVAILABLE, Status.Code.CANCELLED);
  }

  @Test
  void grpcTimeoutHasAtMostEightDigitsAndNeverShortensTheDeadline() {
    assertThat(UnaryCall.timeout(0)).isEqualTo("1n");
    assertThat(UnaryCall.timeout(99_999_999)).isEqualTo("99999999n");
    assertThat(UnaryCall.timeout(100_000_001)).isEqualTo("100001u");
    assertThat(UnaryCall.timeout(Duration.ofSeconds(10).toNanos())).isEqualTo("10000000u");
    assertThat(UnaryCall.timeout(Duration.ofDays(1).toNanos())).isEqualTo("86400000m");
    assertThat(UnaryCall.timeout(Duration.ofDays(10_000).toNanos())).isEqualTo("14400000M");
    assertThat(UnaryCall.timeout(Long.MAX_VALUE)).isEqualTo("2562048H");
  }

  @Test
  void grpcMessagePercentDecoding() {
    assertThat(UnaryCall.percentDecode("plain")).isEqualTo("plain");
    assertThat(UnaryCall.percentDecode("100%25 %C3%A9t%C3%A9")).isEqualTo("100% été");
    assertThat(UnaryCall.percentDecode("bad %G1 and end %4")).isEqualTo("bad %G1 and end %4");
  }

  @Test
  void statusesWithoutGrpcStatusFollowGrpcsMapping() {
    assertThat(UnaryCall.httpStatus("404").getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(UnaryCall.httpStatus("503").getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(UnaryCall.httpStatus("200").getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(UnaryCall.httpStatus("418").getCode()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(UnaryCall.resetStatus(0x7).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(UnaryCall.resetStatus(0x8).getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(UnaryCall.resetStatus(0x2).getCode()).isEqualTo(Status.Code.INTERNAL);
  }

  @Test
  void aMessageOverOneFrameIsRefusedBeforeAnythingIsSent() {
    assertThatThrownBy(() -> UnaryCall.request(REGISTER, new byte[16_380], 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("16380 bytes");
  }

  private static final TimeUnit SECONDS = TimeUnit.SECONDS;

  private static Duration ofMillis(long ms) {
    return Duration.ofMillis(ms);
  }
}
