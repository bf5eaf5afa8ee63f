package io.github.deviceplugin4j.examples.common;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The kubelet's side of {@link CdsTraining}, in a JVM of its own, so that the classes of its gRPC
 * client and its HTTP requests stay out of the plugin's class list (the archive): the plugin's own
 * Register call does not use gRPC's client. It calls the training plugin over its Unix socket as
 * the kubelet does and exits with status 0, or 1 at the first step that fails.
 *
 * <pre>
 * CdsTrainingKubelet legacy &lt;plugin socket&gt; &lt;HTTP endpoint port on loopback&gt;
 * CdsTrainingKubelet watcher &lt;plugin socket&gt;
 * CdsTrainingKubelet register &lt;plugin directory&gt;
 * </pre>
 */
public final class CdsTrainingKubelet {

  private CdsTrainingKubelet() {}

  /**
   * Runs one step.
   *
   * @param args {@code legacy <socket> <port>}: options, ListAndWatch, preferred, Allocate and
   *     pre-start ({@link CdsTraining#ADMITS} admissions), then {@code /metrics}, {@code /healthz}
   *     and {@code /readyz}; {@code watcher <socket>}: GetInfo and NotifyRegistrationStatus, then
   *     the same calls; {@code register <plugin directory>}: the kubelet's registration service on
   *     {@code kubelet.sock}, which accepts a Register and dials the plugin back, then restarts as
   *     the kubelet does and accepts the next Register, {@link CdsTraining#KUBELET_STARTS} times
   */
  public static void main(String[] args) {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    try {
      if (args[0].equals("register")) {
        registerAcrossRestarts(Path.of(args[1]), group);
        System.exit(0);
      }
      ManagedChannel ch = channel(Path.of(args[1]), group);
      try {
        if (args[0].equals("watcher")) {
          RegistrationGrpc.RegistrationBlockingStub registration =
              RegistrationGrpc.newBlockingStub(ch)
                  .withDeadlineAfter(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS);
          PluginInfo info = registration.getInfo(InfoRequest.getDefaultInstance());
          if (!CdsTraining.RESOURCE.equals(info.getName())) {
            throw new IllegalStateException("the plugin watcher socket answered " + info);
          }
          registration.notifyRegistrationStatus(
              RegistrationStatus.newBuilder().setPluginRegistered(true).build());
        }
        callAsTheKubelet(ch);
      } finally {
        ch.shutdownNow().awaitTermination(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS);
      }
      if (args[0].equals("legacy")) {
        InetSocketAddress http =
            new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[2]));
        for (String path : List.of("/metrics", "/healthz", "/readyz")) {
          get(http, path);
        }
      }
    } catch (Exception | AssertionError e) {
      System.err.println("CDS training, kubelet side, failed: " + e);
      e.printStackTrace();
      System.exit(1);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
    System.exit(0);
  }

  /**
   * Serves the kubelet's registration service on {@code kubelet.sock}, so that the plugin's side of
   * a successful Register (reading the answer, the dial-back, the readiness file) and of a kubelet
   * restart (its socket deleted, {@code kubelet.sock} served again, another Register) are in the
   * class list and, on JDK 25, in the AOT cache's method profiles: every plugin runs the first, and
   * the second when its node's kubelet restarts, rarely enough that the JIT never sees it often.
   */
  private static void registerAcrossRestarts(Path pluginDir, EventLoopGroup group)
      throws Exception {
    Path kubeletSocket = pluginDir.resolve("kubelet.sock");
    for (int round = 0; round < CdsTraining.KUBELET_STARTS; round++) {
      if (round > 0) {
        // A restart: the kubelet deletes the sockets of the directory, then serves again.
        try (Stream<Path> files = Files.list(pluginDir)) {
          for (Path f : files.collect(Collectors.toList())) {
            if (!Files.isDirectory(f)) {
              Files.deleteIfExists(f);
            }
          }
        }
      }
      CompletableFuture<RegisterRequest> registered = new CompletableFuture<>();
      Server server =
          NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(kubeletSocket))
              .channelType(NioServerDomainSocketChannel.class)
              .bossEventLoopGroup(group)
              .workerEventLoopGroup(group)
              .withChildOption(ChannelOption.SO_KEEPALIVE, null)
              .addService(
                  new io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc.RegistrationImplBase() {
                    @Override
                    public void register(RegisterRequest request, StreamObserver<Empty> answer) {
                      answer.onNext(Empty.getDefaultInstance());
                      answer.onCompleted();
                      registered.complete(request);
                    }
                  })
              .build()
              .start();
      try {
        RegisterRequest request = registered.get(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS);
        ManagedChannel ch = channel(pluginDir.resolve(request.getEndpoint()), group);
        try {
          DevicePluginGrpc.newBlockingStub(ch)
              .withDeadlineAfter(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS)
              .getDevicePluginOptions(Empty.getDefaultInstance());
          firstList(ch);
        } finally {
          ch.shutdownNow().awaitTermination(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS);
        }
      } finally {
        server.shutdownNow().awaitTermination(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS);
        Files.deleteIfExists(kubeletSocket);
      }
    }
  }

  /**
   * The kubelet's calls on a plugin: options, the first list, then {@link CdsTraining#ADMITS} pod
   * admissions (preferred allocation, Allocate, pre-start), enough for the request path's method
   * profiles.
   */
  private static void callAsTheKubelet(ManagedChannel ch) throws Exception {
    DevicePluginGrpc.DevicePluginBlockingStub stub =
        DevicePluginGrpc.newBlockingStub(ch)
            .withDeadlineAfter(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS);
    stub.getDevicePluginOptions(Empty.getDefaultInstance());
    firstList(ch);
    for (int i = 0; i < CdsTraining.ADMITS; i++) {
      // A deadline per admission: a busy build machine may take a while over all of them.
      admit(
          DevicePluginGrpc.newBlockingStub(ch)
              .withDeadlineAfter(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS));
    }
  }

  /** One pod admission's calls, in the kubelet's order. */
  private static void admit(DevicePluginGrpc.DevicePluginBlockingStub stub) {
    stub.getPreferredAllocation(
        io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest.newBuilder()
            .addContainerRequests(
                ContainerPreferredAllocationRequest.newBuilder()
                    .addAvailableDeviceIDs(CdsTraining.Backend.ID)
                    .setAllocationSize(1))
            .build());
    stub.allocate(
        AllocateRequest.newBuilder()
            .addContainerRequests(
                ContainerAllocateRequest.newBuilder().addDevicesIds(CdsTraining.Backend.ID))
            .build());
    stub.preStartContainer(
        PreStartContainerRequest.newBuilder().addDevicesIds(CdsTraining.Backend.ID).build());
  }

  /** Opens ListAndWatch, waits for the first list, and cancels the stream. */
  private static void firstList(ManagedChannel ch) throws Exception {
    CompletableFuture<ListAndWatchResponse> first = new CompletableFuture<>();
    io.grpc.Context.CancellableContext stream = io.grpc.Context.current().withCancellation();
    stream.run(
        () ->
            DevicePluginGrpc.newStub(ch)
                .listAndWatch(
                    Empty.getDefaultInstance(),
                    new StreamObserver<>() {
                      @Override
                      public void onNext(ListAndWatchResponse value) {
                        first.complete(value);
                      }

                      @Override
                      public void onError(Throwable t) {
                        first.completeExceptionally(t);
                      }

                      @Override
                      public void onCompleted() {
                        first.completeExceptionally(
                            new IllegalStateException("ListAndWatch ended"));
                      }
                    }));
    try {
      ListAndWatchResponse list = first.get(CdsTraining.STEP_SECONDS, TimeUnit.SECONDS);
      if (list.getDevicesCount() != 1) {
        throw new IllegalStateException("the training plugin listed " + list);
      }
    } finally {
      stream.cancel(null);
    }
  }

  /**
   * One GET over a plain socket, as a probe or a scraper sends it; the answer is read and dropped.
   */
  private static void get(InetSocketAddress address, String path) throws IOException {
    try (Socket socket = new Socket(address.getAddress(), address.getPort())) {
      socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(CdsTraining.STEP_SECONDS));
      socket
          .getOutputStream()
          .write(
              ("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      byte[] head = socket.getInputStream().readAllBytes();
      if (head.length < 12 || head[0] != 'H') {
        throw new IllegalStateException("GET " + path + " got no HTTP answer");
      }
    }
  }

  private static ManagedChannel channel(Path socket, EventLoopGroup group) {
    return NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
        .channelType(NioDomainSocketChannel.class)
        .eventLoopGroup(group)
        .usePlaintext()
        .withOption(ChannelOption.SO_KEEPALIVE, null)
        .build();
  }
}
