package io.github.deviceplugin4j.testkit.plugin;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatusResponse;
import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.Device;
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
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A plugin that behaves like the kubelet's own reference stub plugin (kubernetes/kubernetes {@code
 * pkg/kubelet/cm/devicemanager/plugin/v1beta1/stub.go}, as driven by the kubelet's sample device
 * plugin), written with raw grpc-java for the conformance tests. What it does, like the stub:
 *
 * <ul>
 *   <li>deletes a stale socket, serves {@code DevicePlugin} and {@code pluginregistration
 *       .Registration} on {@code dp.<epoch seconds>} in {@code DEVICE_PLUGIN_DIR}, then calls
 *       {@code Register} (v1beta1, the socket's file name, options from its flags); it skips
 *       Register when {@code --deprecation-dir} is given and {@code <dir>DEPRECATION} exists, and
 *       exits 1 when Register fails (the sample plugin panics);
 *   <li>watches the directory and, when {@code kubelet.sock} is created, restarts its server and
 *       registers again;
 *   <li>{@code GetDevicePluginOptions} answers {@code --pre-start} and {@code --preferred}; {@code
 *       ListAndWatch} sends the list once and keeps the stream open, ignoring cancellation;
 *   <li>{@code Allocate} accepts ANY device ID: one container response per container request with a
 *       device node per requested ID (the shape of the kubelet's test allocation functions);
 *   <li>{@code GetPreferredAllocation} answers the stub's default, an empty response; {@code
 *       PreStartContainer} always succeeds;
 *   <li>on SIGTERM it stops the server and deletes its socket.
 * </ul>
 *
 * <p>Arguments: {@code --resource NAME} (example.com/resource), {@code --devices N} (2, IDs
 * Dev-1..), {@code --unhealthy K} (0: the last K devices are Unhealthy), {@code --pre-start},
 * {@code --preferred}, {@code --deprecation-dir DIR}.
 */
public final class ReferenceStubPluginMain {
  private final String resource;
  private final Path socket;
  private final List<Device> devices;
  private final DevicePluginOptions options;
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(
          1, new DefaultThreadFactory("stub-plugin", true), NioIoHandler.newFactory());
  private Server server;

  private ReferenceStubPluginMain(
      String resource, Path socket, List<Device> devices, DevicePluginOptions options) {
    this.resource = resource;
    this.socket = socket;
    this.devices = List.copyOf(devices);
    this.options = options;
  }

  public static void main(String[] args) throws Exception {
    String resource = "example.com/resource";
    int count = 2;
    int unhealthy = 0;
    boolean preStart = false;
    boolean preferred = false;
    String deprecationDir = "";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--resource" -> resource = args[++i];
        case "--devices" -> count = Integer.parseInt(args[++i]);
        case "--unhealthy" -> unhealthy = Integer.parseInt(args[++i]);
        case "--pre-start" -> preStart = true;
        case "--preferred" -> preferred = true;
        case "--deprecation-dir" -> deprecationDir = args[++i];
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path dir = Path.of(System.getenv("DEVICE_PLUGIN_DIR"));
    List<Device> devices = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      devices.add(
          Device.newBuilder()
              .setID("Dev-" + i)
              .setHealth(i > count - unhealthy ? "Unhealthy" : "Healthy")
              .build());
    }
    Path socket = dir.resolve("dp." + System.currentTimeMillis() / 1000);
    ReferenceStubPluginMain stub =
        new ReferenceStubPluginMain(
            resource,
            socket,
            devices,
            DevicePluginOptions.newBuilder()
                .setPreStartRequired(preStart)
                .setGetPreferredAllocationAvailable(preferred)
                .build());
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  System.out.println("Shutting down, received signal");
                  stub.stop();
                }));
    Path kubeletSocket = dir.resolve("kubelet.sock");
    try (WatchService ws = FileSystems.getDefault().newWatchService()) {
      dir.register(ws, StandardWatchEventKinds.ENTRY_CREATE);
      stub.start();
      stub.register(kubeletSocket, deprecationDir);
      while (true) {
        WatchKey key = ws.take();
        for (WatchEvent<?> e : key.pollEvents()) {
          if (kubeletSocket.getFileName().equals(e.context())) {
            System.out.println("inotify: " + kubeletSocket + " created, restarting");
            stub.stopServer();
            stub.start();
            stub.register(kubeletSocket, deprecationDir);
          }
        }
        key.reset();
      }
    }
  }

  private synchronized void start() throws IOException {
    Files.deleteIfExists(socket);
    server =
        NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .withChildOption(ChannelOption.SO_KEEPALIVE, null)
            .addService(new DevicePluginService())
            .addService(new WatcherService())
            .build()
            .start();
    System.out.println("Starting to serve on socket " + socket);
  }

  private void register(Path kubeletSocket, String deprecationDir) {
    // The stub concatenates the directory and the file name, as here.
    if (!deprecationDir.isEmpty() && Files.exists(Path.of(deprecationDir + "DEPRECATION"))) {
      System.out.println("Deprecation file found. Skip registration");
      return;
    }
    ManagedChannel ch =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(kubeletSocket))
            .channelType(NioDomainSocketChannel.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .overrideAuthority("localhost")
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .build();
    try {
      RegistrationGrpc.newBlockingStub(ch)
          .withWaitForReady()
          .withDeadlineAfter(10, TimeUnit.SECONDS)
          .register(
              RegisterRequest.newBuilder()
                  .setVersion("v1beta1")
                  .setEndpoint(socket.getFileName().toString())
                  .setResourceName(resource)
                  .setOptions(options)
                  .build());
      System.out.println("Device Plugin registered with the Kubelet");
    } catch (RuntimeException e) {
      System.out.println("Client unable to register to kubelet: " + e.getMessage());
      stopServer();
      System.exit(1);
    } finally {
      ch.shutdownNow();
    }
  }

  private synchronized void stopServer() {
    if (server != null) {
      server.shutdownNow();
      try {
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      server = null;
    }
  }

  private void stop() {
    stopServer();
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      System.out.println("cannot remove " + socket + ": " + e.getMessage());
    }
  }

  private final class DevicePluginService extends DevicePluginGrpc.DevicePluginImplBase {
    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> out) {
      out.onNext(options);
      out.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
      // Sent once; the stream stays open until the server stops (no updates in these tests).
      out.onNext(ListAndWatchResponse.newBuilder().addAllDevices(devices).build());
    }

    @Override
    public void getPreferredAllocation(
        PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> out) {
      out.onNext(PreferredAllocationResponse.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> out) {
      AllocateResponse.Builder b = AllocateResponse.newBuilder();
      for (ContainerAllocateRequest c : request.getContainerRequestsList()) {
        ContainerAllocateResponse.Builder r = ContainerAllocateResponse.newBuilder();
        for (String id : c.getDevicesIdsList()) {
          r.addDevices(
              DeviceSpec.newBuilder()
                  .setHostPath("/dev/" + id)
                  .setContainerPath("/dev/" + id)
                  .setPermissions("rw"));
        }
        b.addContainerResponses(r);
      }
      out.onNext(b.build());
      out.onCompleted();
    }

    @Override
    public void preStartContainer(
        PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> out) {
      out.onNext(PreStartContainerResponse.getDefaultInstance());
      out.onCompleted();
    }
  }

  private final class WatcherService
      extends io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc
          .RegistrationImplBase {
    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> out) {
      out.onNext(
          PluginInfo.newBuilder()
              .setType("DevicePlugin")
              .setName(resource)
              .addSupportedVersions("v1beta1")
              .build());
      out.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(
        RegistrationStatus request, StreamObserver<RegistrationStatusResponse> out) {
      if (!request.getPluginRegistered()) {
        System.out.println("Registration failed: " + request.getError());
      }
      out.onNext(RegistrationStatusResponse.getDefaultInstance());
      out.onCompleted();
    }
  }
}
