package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationResponse;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.DeviceSpec;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerResponse;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
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
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The baseline: a minimal device plugin written directly on grpc-java, with no SDK. It serves the
 * same transport as the SDK (Netty's pure-Java Unix-domain-socket channels, grpc-java's default
 * executor), answers what the benchmark's SDK backend answers (one device node per device and an
 * environment variable naming the devices), and does nothing else: no validation of requests, no
 * deadlines on its own work, no restart handling, no health streaming beyond the first list.
 */
public final class BaselinePlugin implements AutoCloseable {

  /** The environment variable both plugins answer with. */
  public static final String ENV = "BENCH_DEVICES";

  private final String resource;
  private final Path socket;
  private final List<String> deviceIds;
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final List<StreamObserver<ListAndWatchResponse>> streams = new CopyOnWriteArrayList<>();
  private Server server;

  /**
   * A baseline plugin.
   *
   * @param resource the resource name
   * @param socket where it serves
   * @param deviceIds its devices, all healthy
   */
  public BaselinePlugin(String resource, Path socket, List<String> deviceIds) {
    this.resource = resource;
    this.socket = socket;
    this.deviceIds = List.copyOf(deviceIds);
  }

  /**
   * Serves on the socket.
   *
   * @return this
   * @throws IOException when the socket cannot be bound
   */
  public BaselinePlugin start() throws IOException {
    Files.deleteIfExists(socket);
    server =
        NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .withChildOption(ChannelOption.SO_KEEPALIVE, null)
            .addService(new Service())
            .build()
            .start();
    return this;
  }

  /**
   * Registers with the kubelet (legacy {@code Register}).
   *
   * @param kubeletSocket the kubelet's registration socket
   */
  public void register(Path kubeletSocket) {
    ManagedChannel ch =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(kubeletSocket))
            .channelType(NioDomainSocketChannel.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .build();
    try {
      RegistrationGrpc.newBlockingStub(ch)
          .withDeadlineAfter(10, TimeUnit.SECONDS)
          .register(
              RegisterRequest.newBuilder()
                  .setVersion("v1beta1")
                  .setEndpoint(socket.getFileName().toString())
                  .setResourceName(resource)
                  .setOptions(options())
                  .build());
    } finally {
      ch.shutdownNow();
    }
  }

  private static DevicePluginOptions options() {
    return DevicePluginOptions.newBuilder()
        .setPreStartRequired(true)
        .setGetPreferredAllocationAvailable(true)
        .build();
  }

  @Override
  public void close() throws InterruptedException {
    for (StreamObserver<ListAndWatchResponse> s : streams) {
      try {
        s.onCompleted();
      } catch (RuntimeException alreadyClosed) {
        // the kubelet went away first
      }
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    try {
      Files.deleteIfExists(socket);
    } catch (IOException ignored) {
      // best effort
    }
  }

  private final class Service extends DevicePluginGrpc.DevicePluginImplBase {

    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> out) {
      out.onNext(options());
      out.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
      ListAndWatchResponse.Builder list = ListAndWatchResponse.newBuilder();
      for (String id : deviceIds) {
        list.addDevicesBuilder().setID(id).setHealth("Healthy");
      }
      streams.add(out);
      out.onNext(list.build());
    }

    @Override
    public void getPreferredAllocation(
        PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> out) {
      PreferredAllocationResponse.Builder response = PreferredAllocationResponse.newBuilder();
      for (ContainerPreferredAllocationRequest c : request.getContainerRequestsList()) {
        Set<String> chosen = new LinkedHashSet<>(c.getMustIncludeDeviceIDsList());
        for (String id : c.getAvailableDeviceIDsList()) {
          if (chosen.size() >= c.getAllocationSize()) {
            break;
          }
          chosen.add(id);
        }
        response.addContainerResponses(
            ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(chosen));
      }
      out.onNext(response.build());
      out.onCompleted();
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> out) {
      AllocateResponse.Builder response = AllocateResponse.newBuilder();
      for (ContainerAllocateRequest c : request.getContainerRequestsList()) {
        ContainerAllocateResponse.Builder container = ContainerAllocateResponse.newBuilder();
        List<String> ids = new ArrayList<>(c.getDevicesIdsList());
        for (String id : ids) {
          container.addDevices(
              DeviceSpec.newBuilder()
                  .setContainerPath("/dev/" + id)
                  .setHostPath("/dev/" + id)
                  .setPermissions("rw"));
        }
        container.putEnvs(ENV, String.join(",", ids));
        response.addContainerResponses(container);
      }
      out.onNext(response.build());
      out.onCompleted();
    }

    @Override
    public void preStartContainer(
        PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> out) {
      out.onNext(PreStartContainerResponse.getDefaultInstance());
      out.onCompleted();
    }
  }
}
