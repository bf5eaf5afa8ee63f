package io.github.deviceplugin4j.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.Device;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The plain-frame server against grpc-java's own client over a real Unix socket: unary and
 * streaming calls, metadata both ways, errors, flow control past the windows, cancellation,
 * deadlines, limits, shutdown; and a few raw frames.
 */
class H2ServerTest {

  private static final Metadata.Key<String> TENANT =
      Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<byte[]> TRACE =
      Metadata.Key.of("x-trace-bin", Metadata.BINARY_BYTE_MARSHALLER);
  private static final Metadata.Key<String> ANSWERED_BY =
      Metadata.Key.of("x-answered-by", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> TRAILER =
      Metadata.Key.of("x-trailer", Metadata.ASCII_STRING_MARSHALLER);

  private EventLoopGroup serverLoop;
  private EventLoopGroup clientLoop;
  private Path dir;
  private Path socket;
  private H2Server server;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final Service service = new Service();

  @BeforeEach
  void setUp() throws Exception {
    serverLoop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    clientLoop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    dir = Files.createTempDirectory(Path.of("/tmp"), "h2s");
    socket = dir.resolve("s.sock");
  }

  @AfterEach
  void tearDown() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.shutdownNow();
      assertThat(server.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }
    service.pool.shutdownNow();
    serverLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** What the tests' DevicePlugin service does: chosen by the first device ID of a request. */
  static final class Service extends DevicePluginGrpc.DevicePluginImplBase {
    final ExecutorService pool = Executors.newCachedThreadPool();
    final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    final AtomicReference<ServerCallStreamObserver<ListAndWatchResponse>> stream =
        new AtomicReference<>();
    volatile int streamMessages = 3;
    volatile int streamDevices = 1;

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> out) {
      List<String> ids = request.getContainerRequests(0).getDevicesIdsList();
      String first = ids.isEmpty() ? "" : ids.get(0);
      switch (first) {
        case "fail" ->
            out.onError(
                Status.INVALID_ARGUMENT
                    .withDescription("no device \"fail\" (100% sure, ünïcödé)\nsecond line")
                    .asRuntimeException(trailer("failed")));
        case "throw" -> throw new IllegalStateException("the handler broke");
        case "hang" -> {
          ServerCallStreamObserver<AllocateResponse> call =
              (ServerCallStreamObserver<AllocateResponse>) out;
          call.setOnCancelHandler(() -> events.add("cancelled"));
          events.add("hanging, deadline " + (Context.current().getDeadline() != null));
        }
        case "worker" -> pool.execute(() -> answer(ids, out));
        default -> answer(ids, out);
      }
    }

    private static Metadata trailer(String value) {
      Metadata md = new Metadata();
      md.put(TRAILER, value);
      return md;
    }

    private void answer(List<String> ids, StreamObserver<AllocateResponse> out) {
      out.onNext(
          AllocateResponse.newBuilder()
              .addContainerResponses(
                  ContainerAllocateResponse.newBuilder()
                      .putEnvs("IDS", String.join(",", ids))
                      .putEnvs("THREAD", Thread.currentThread().getName()))
              .build());
      out.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
      ServerCallStreamObserver<ListAndWatchResponse> call =
          (ServerCallStreamObserver<ListAndWatchResponse>) out;
      stream.set(call);
      call.setOnCancelHandler(() -> events.add("stream cancelled"));
      int messages = streamMessages;
      int devices = streamDevices;
      // Sends only while the call is ready, as the SDK's subscriber does.
      Iterator<Integer> next = java.util.stream.IntStream.range(0, messages).iterator();
      Runnable drain =
          new Runnable() {
            boolean done;

            @Override
            public synchronized void run() {
              while (!done && call.isReady() && next.hasNext()) {
                call.onNext(devices(next.next(), devices));
              }
              if (!done && !next.hasNext()) {
                done = true;
                events.add("stream sent");
              }
            }
          };
      call.setOnReadyHandler(drain);
      drain.run();
    }

    static ListAndWatchResponse devices(int round, int count) {
      ListAndWatchResponse.Builder b = ListAndWatchResponse.newBuilder();
      for (int i = 0; i < count; i++) {
        b.addDevices(
            Device.newBuilder().setID("round-" + round + "-device-" + i).setHealth("Healthy"));
      }
      return b.build();
    }
  }

  /** Copies request headers to the answer, and marks both. */
  static final class EchoInterceptor implements ServerInterceptor {
    final List<String> seen = new CopyOnWriteArrayList<>();

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      seen.add(call.getMethodDescriptor().getFullMethodName() + " tenant=" + headers.get(TENANT));
      byte[] trace = headers.get(TRACE);
      return next.startCall(
          new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void sendHeaders(Metadata h) {
              h.put(ANSWERED_BY, "h2");
              if (trace != null) {
                h.put(TRACE, trace);
              }
              super.sendHeaders(h);
            }
          },
          headers);
    }
  }

  private void serve(ServerServiceDefinition... services) throws IOException {
    server = H2Server.start(socket, List.of(services), serverLoop);
  }

  private ManagedChannel channel() {
    ManagedChannel c =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(clientLoop)
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .usePlaintext()
            .build();
    channels.add(c);
    return c;
  }

  private static AllocateRequest allocate(String... ids) {
    return AllocateRequest.newBuilder()
        .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(List.of(ids)))
        .build();
  }

  /** The call fails with this code and a description containing the text. */
  private static void assertStatus(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call,
      Status.Code code,
      String description) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(code);
              assertThat(String.valueOf(e.getStatus().getDescription())).contains(description);
            });
  }

  /** The connection (still) answers an Allocate of its own. */
  private static void assertServes(Channel c, String id) {
    assertThat(blocking(c).allocate(allocate(id)).getContainerResponses(0).getEnvsMap())
        .containsEntry("IDS", id);
  }

  private static DevicePluginGrpc.DevicePluginBlockingStub blocking(Channel c) {
    return DevicePluginGrpc.newBlockingStub(c).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @Test
  void answersUnaryCallsWithMetadataBothWaysThroughInterceptors() throws Exception {
    EchoInterceptor interceptor = new EchoInterceptor();
    serve(ServerInterceptors.intercept(service, interceptor));
    AtomicReference<Metadata> answerHeaders = new AtomicReference<>();
    ClientInterceptor capture =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(
                next.newCall(method, options)) {
              @Override
              public void start(Listener<R> listener, Metadata headers) {
                headers.put(TENANT, "team-a");
                headers.put(TRACE, new byte[] {0, 1, 2, (byte) 0xff});
                super.start(
                    new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                        listener) {
                      @Override
                      public void onHeaders(Metadata h) {
                        answerHeaders.set(h);
                        super.onHeaders(h);
                      }
                    },
                    headers);
              }
            };
          }
        };

    AllocateResponse answer =
        blocking(ClientInterceptors.intercept(channel(), capture)).allocate(allocate("a", "b"));

    assertThat(answer.getContainerResponses(0).getEnvsMap()).containsEntry("IDS", "a,b");
    assertThat(interceptor.seen).containsExactly("v1beta1.DevicePlugin/Allocate tenant=team-a");
    assertThat(answerHeaders.get().get(ANSWERED_BY)).isEqualTo("h2");
    assertThat(answerHeaders.get().get(TRACE)).containsExactly(0, 1, 2, 0xff);
  }

  @Test
  void answersFromAnotherThreadAndFromTheLoopAlike() throws Exception {
    serve(service.bindService());
    var stub = blocking(channel());

    AllocateResponse onWorker = stub.allocate(allocate("worker", "x"));
    AllocateResponse onLoop = stub.allocate(allocate("x"));

    assertThat(onWorker.getContainerResponses(0).getEnvsMap().get("THREAD")).startsWith("pool-");
    assertThat(onLoop.getContainerResponses(0).getEnvsMap().get("THREAD"))
        .doesNotStartWith("pool-");
  }

  @Test
  void carriesAnErrorsStatusMessageAndTrailers_andKeepsServing() throws Exception {
    serve(service.bindService());
    var stub = blocking(channel());

    assertThatThrownBy(() -> stub.allocate(allocate("fail")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription())
                  .isEqualTo("no device \"fail\" (100% sure, ünïcödé)\nsecond line");
              assertThat(e.getTrailers().get(TRAILER)).isEqualTo("failed");
            });
    assertStatus(() -> stub.allocate(allocate("throw")), Status.Code.UNKNOWN, "");
    assertThat(stub.allocate(allocate("ok")).getContainerResponses(0).getEnvsMap())
        .containsEntry("IDS", "ok");
  }

  @Test
  void anUnknownMethodIsUnimplemented() throws Exception {
    serve(service.bindService());
    var other = RegistrationGrpc.newBlockingStub(channel()).withDeadlineAfter(10, TimeUnit.SECONDS);

    assertStatus(
        () -> other.getInfo(InfoRequest.getDefaultInstance()),
        Status.Code.UNIMPLEMENTED,
        "Method not found: pluginregistration.Registration/GetInfo");
  }

  @Test
  void streamsPastTheFlowControlWindowsInOrder() throws Exception {
    service.streamMessages = 40;
    service.streamDevices = 2_000; // about 75 KB a message, 3 MB in all: past every window
    serve(service.bindService());
    List<ListAndWatchResponse> got = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Void> done = new CompletableFuture<>();

    DevicePluginGrpc.newStub(channel())
        .listAndWatch(
            Empty.getDefaultInstance(),
            new StreamObserver<>() {
              @Override
              public void onNext(ListAndWatchResponse value) {
                got.add(value);
                if (got.size() == 40) {
                  done.complete(null);
                }
              }

              @Override
              public void onError(Throwable t) {
                done.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {}
            });

    try {
      done.get(20, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      System.err.println(
          "DEBUG got="
              + got.size()
              + " ready="
              + service.stream.get().isReady()
              + " events="
              + service.events);
      throw e;
    }
    assertThat(service.events.poll(10, TimeUnit.SECONDS)).isEqualTo("stream sent");
    for (int i = 0; i < 40; i++) {
      assertThat(got.get(i)).isEqualTo(Service.devices(i, 2_000));
    }
  }

  @Test
  void manyConcurrentCallsOnOneConnectionAllGetTheirOwnAnswer() throws Exception {
    serve(service.bindService());
    ManagedChannel c = channel();
    ExecutorService callers = Executors.newFixedThreadPool(16);
    try {
      List<Future<?>> all = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        int caller = t;
        all.add(
            callers.submit(
                () -> {
                  var stub = blocking(c);
                  for (int i = 0; i < 200; i++) {
                    String id = caller + "-" + i;
                    String mode = i % 3 == 0 ? "worker" : "loop";
                    assertThat(
                            stub.allocate(allocate(mode, id)).getContainerResponses(0).getEnvsMap())
                        .containsEntry("IDS", mode + "," + id);
                  }
                  return null;
                }));
      }
      for (Future<?> f : all) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void aClientsDeadlineCancelsTheCallOnTheServer() throws Exception {
    serve(service.bindService());
    var stub =
        DevicePluginGrpc.newBlockingStub(channel()).withDeadlineAfter(300, TimeUnit.MILLISECONDS);

    assertStatus(() -> stub.allocate(allocate("hang")), Status.Code.DEADLINE_EXCEEDED, "");
    assertThat(service.events.poll(10, TimeUnit.SECONDS)).isEqualTo("hanging, deadline true");
    assertThat(service.events.poll(10, TimeUnit.SECONDS)).isEqualTo("cancelled");
  }

  @Test
  void aCancelledStreamReachesTheHandler() throws Exception {
    serve(service.bindService());
    Context.CancellableContext ctx = Context.current().withCancellation();
    CountDownLatch first = new CountDownLatch(1);
    ctx.run(
        () ->
            DevicePluginGrpc.newStub(channel())
                .listAndWatch(
                    Empty.getDefaultInstance(),
                    new StreamObserver<>() {
                      @Override
                      public void onNext(ListAndWatchResponse value) {
                        first.countDown();
                      }

                      @Override
                      public void onError(Throwable t) {}

                      @Override
                      public void onCompleted() {}
                    }));
    assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();

    ctx.cancel(null);

    assertThat(service.events.poll(10, TimeUnit.SECONDS)).isEqualTo("stream sent");
    assertThat(service.events.poll(10, TimeUnit.SECONDS)).isEqualTo("stream cancelled");
    assertThat(service.stream.get().isCancelled()).isTrue();
  }

  @Test
  void refusesARequestOverFourMiB_andKeepsTheConnection() throws Exception {
    serve(service.bindService());
    ManagedChannel c = channel();
    String big = "x".repeat(1 << 20);

    assertStatus(
        () -> blocking(c).allocate(allocate("a", big, big, big, big, big)),
        Status.Code.RESOURCE_EXHAUSTED,
        "exceeds maximum size 4194304");
    assertServes(c, "small");
  }

  @Test
  void refusesACompressedRequestWithAClearStatus() throws Exception {
    serve(service.bindService());
    ManagedChannel c = channel();

    assertStatus(
        () -> blocking(c).withCompression("gzip").allocate(allocate("a")),
        Status.Code.UNIMPLEMENTED,
        "uncompressed");
    assertServes(c, "b");
  }

  @Test
  void shutdownKeepsOpenCallsAndStopsAccepting_shutdownNowEndsThem() throws Exception {
    service.streamMessages = 1;
    serve(service.bindService());
    BlockingQueue<Object> received = new LinkedBlockingQueue<>();
    DevicePluginGrpc.newStub(channel())
        .listAndWatch(
            Empty.getDefaultInstance(),
            new StreamObserver<>() {
              @Override
              public void onNext(ListAndWatchResponse value) {
                received.add(value.getDevices(0).getID());
              }

              @Override
              public void onError(Throwable t) {
                received.add(Status.fromThrowable(t).getCode());
              }

              @Override
              public void onCompleted() {
                received.add("completed");
              }
            });
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("round-0-device-0");

    server.shutdown();

    assertThat(server.isShutdown()).isTrue();
    assertThat(server.isTerminated()).isFalse();
    service.stream.get().onNext(Service.devices(7, 1));
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("round-7-device-0");
    assertStatus(() -> blocking(channel()).allocate(allocate("a")), Status.Code.UNAVAILABLE, "");

    server.shutdownNow();

    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(service.events).contains("stream cancelled");
  }

  @Test
  void answersPingsAndClosesAConnectionThatIsNotHttp2() throws Exception {
    serve(service.bindService());
    try (SocketChannel raw = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      raw.connect(UnixDomainSocketAddress.of(socket));
      ByteBuffer req = ByteBuffer.allocate(64);
      req.put("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      req.put(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // empty SETTINGS
      req.put(new byte[] {0, 0, 8, 6, 0, 0, 0, 0, 0}); // PING
      req.put(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
      req.flip();
      raw.write(req);

      List<String> frames = new ArrayList<>();
      ByteBuffer in = ByteBuffer.allocate(1024);
      while (!frames.contains("PING ack 0102030405060708")) {
        assertThat(raw.read(in)).as("the server closed the connection").isPositive();
        in.flip();
        while (in.remaining() >= 9
            && in.remaining() >= 9 + (in.getShort(in.position() + 1) & 0xffff)) {
          int length = (in.get() & 0xff) << 16 | (in.getShort() & 0xffff);
          int type = in.get();
          int flags = in.get();
          in.getInt();
          byte[] payload = new byte[length];
          in.get(payload);
          frames.add(
              (type == 4
                      ? "SETTINGS"
                      : type == 6 ? "PING" : type == 8 ? "WINDOW_UPDATE" : "" + type)
                  + ((flags & 1) != 0 ? " ack" : "")
                  + (type == 6 ? " " + java.util.HexFormat.of().formatHex(payload) : ""));
        }
        in.compact();
      }
      assertThat(frames)
          .containsSubsequence(
              "SETTINGS", "WINDOW_UPDATE", "SETTINGS ack", "PING ack 0102030405060708");
    }
    try (SocketChannel raw = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      raw.connect(UnixDomainSocketAddress.of(socket));
      raw.write(
          ByteBuffer.wrap("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
      ByteBuffer in = ByteBuffer.allocate(4096);
      int n;
      do {
        n = raw.read(in);
        in.clear();
      } while (n > 0);
      assertThat(n).as("the connection ends").isEqualTo(-1);
    }
    assertServes(channel(), "still");
  }
}
