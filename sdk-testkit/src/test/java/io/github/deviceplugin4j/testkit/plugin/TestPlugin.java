package io.github.deviceplugin4j.testkit.plugin;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatusResponse;
import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.CDIDevice;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationResponse;
import io.github.deviceplugin4j.api.v1beta1.Device;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.DeviceSpec;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.api.v1beta1.Mount;
import io.github.deviceplugin4j.api.v1beta1.NUMANode;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerResponse;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.github.deviceplugin4j.api.v1beta1.TopologyInfo;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * A tiny device plugin written with raw grpc-java (no SDK): serves {@code DevicePlugin} (and,
 * optionally, {@code pluginregistration.Registration}) on a Unix socket and registers with a
 * kubelet. Every answer can be replaced by a test to produce the kubelet-visible mistakes the fake
 * kubelet must catch.
 */
public final class TestPlugin implements AutoCloseable {
  private final String resource;
  private final Path socket;
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(
          1, new DefaultThreadFactory("test-plugin", true), NioIoHandler.newFactory());
  // The plugin's own call executor, stopped before the event loop so no late answer (a Register
  // or NotifyRegistrationStatus ending during close) writes to a stopped loop.
  private final ExecutorService executor =
      Executors.newCachedThreadPool(new DefaultThreadFactory("test-plugin-grpc", true));
  private final List<ServerCallStreamObserver<ListAndWatchResponse>> streams =
      new CopyOnWriteArrayList<>();
  private volatile List<Device> devices = List.of();
  private volatile DevicePluginOptions options = DevicePluginOptions.getDefaultInstance();
  private volatile Function<AllocateRequest, AllocateResponse> allocate = this::defaultAllocate;
  private volatile Function<PreStartContainerRequest, PreStartContainerResponse> preStart =
      r -> PreStartContainerResponse.getDefaultInstance();
  private volatile Function<PreferredAllocationRequest, PreferredAllocationResponse> preferred =
      TestPlugin::defaultPreferred;
  private volatile Function<Empty, DevicePluginOptions> optionsAnswer = e -> options;
  private volatile UnaryOperator<ListAndWatchResponse> listFilter = UnaryOperator.identity();
  private volatile PluginInfo pluginInfo;
  // GetInfo calls left unanswered, first ones first (a plugin too busy to answer in time).
  private final java.util.concurrent.atomic.AtomicInteger unansweredInfos =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Every GetInfo call, answered or not (plugin-watcher mode). */
  public final java.util.concurrent.atomic.AtomicInteger infoCalls =
      new java.util.concurrent.atomic.AtomicInteger();

  private volatile Runnable onStreamCancelled = () -> {};
  private volatile long firstListDelayMillis;

  /** Every PreStartContainer request, in order. */
  public final BlockingQueue<PreStartContainerRequest> preStarts = new LinkedBlockingQueue<>();

  /** Every registration status the kubelet notified (plugin-watcher mode). */
  public final BlockingQueue<RegistrationStatus> statuses = new LinkedBlockingQueue<>();

  /** Every Allocate request, in order. */
  public final BlockingQueue<AllocateRequest> allocations = new LinkedBlockingQueue<>();

  private Server server;

  /**
   * A plugin for a resource on a socket path.
   *
   * @param resource the resource name
   * @param socket the socket to serve on
   */
  public TestPlugin(String resource, Path socket) {
    this.resource = resource;
    this.socket = socket;
  }

  /**
   * Healthy devices dev-0..dev-(n-1), on NUMA node i % 2.
   *
   * @param n how many
   * @return the devices
   */
  public static List<Device> healthyDevices(int n) {
    List<Device> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(device("dev-" + i, "Healthy", i % 2));
    }
    return list;
  }

  /**
   * One device.
   *
   * @param id the ID
   * @param health the health string
   * @param numa the NUMA node, or negative for none
   * @return the device
   */
  public static Device device(String id, String health, long numa) {
    Device.Builder b = Device.newBuilder().setID(id).setHealth(health);
    if (numa >= 0) {
      b.setTopology(TopologyInfo.newBuilder().addNodes(NUMANode.newBuilder().setID(numa)));
    }
    return b.build();
  }

  public String resource() {
    return resource;
  }

  public Path socket() {
    return socket;
  }

  public TestPlugin devices(List<Device> list) {
    this.devices = List.copyOf(list);
    return this;
  }

  public TestPlugin options(boolean preStartRequired, boolean preferredAvailable) {
    this.options =
        DevicePluginOptions.newBuilder()
            .setPreStartRequired(preStartRequired)
            .setGetPreferredAllocationAvailable(preferredAvailable)
            .build();
    return this;
  }

  public TestPlugin optionsAnswer(Function<Empty, DevicePluginOptions> answer) {
    this.optionsAnswer = answer;
    return this;
  }

  public TestPlugin allocateAnswer(Function<AllocateRequest, AllocateResponse> answer) {
    this.allocate = answer;
    return this;
  }

  public TestPlugin preStartAnswer(
      Function<PreStartContainerRequest, PreStartContainerResponse> answer) {
    this.preStart = answer;
    return this;
  }

  public TestPlugin preferredAnswer(
      Function<PreferredAllocationRequest, PreferredAllocationResponse> answer) {
    this.preferred = answer;
    return this;
  }

  public TestPlugin listFilter(UnaryOperator<ListAndWatchResponse> filter) {
    this.listFilter = filter;
    return this;
  }

  public TestPlugin firstListDelayMillis(long millis) {
    this.firstListDelayMillis = millis;
    return this;
  }

  public TestPlugin onStreamCancelled(Runnable r) {
    this.onStreamCancelled = r;
    return this;
  }

  /**
   * Also serve {@code pluginregistration.Registration} on the same socket with this info.
   *
   * @param info what GetInfo answers
   * @return this
   */
  public TestPlugin pluginInfo(PluginInfo info) {
    this.pluginInfo = info;
    return this;
  }

  /**
   * Leaves the first {@code n} GetInfo calls unanswered, as a plugin too busy to answer within the
   * kubelet's 1 s deadline would.
   *
   * @param n calls to leave unanswered
   * @return this
   */
  public TestPlugin leaveGetInfoUnanswered(int n) {
    unansweredInfos.set(n);
    return this;
  }

  /**
   * Replaces the device list and sends it on every open stream.
   *
   * @param list the devices
   */
  public void update(List<Device> list) {
    this.devices = List.copyOf(list);
    ListAndWatchResponse r = listFilter.apply(response());
    for (ServerCallStreamObserver<ListAndWatchResponse> s : streams) {
      synchronized (s) {
        if (!s.isCancelled()) {
          s.onNext(r);
        }
      }
    }
  }

  /**
   * How many ListAndWatch streams are open.
   *
   * @return the count
   */
  public int openStreams() {
    streams.removeIf(ServerCallStreamObserver::isCancelled);
    return streams.size();
  }

  /** Ends every open ListAndWatch stream normally. */
  public void completeStreams() {
    for (ServerCallStreamObserver<ListAndWatchResponse> s : streams) {
      synchronized (s) {
        if (!s.isCancelled()) {
          s.onCompleted();
        }
      }
    }
    streams.clear();
  }

  private ListAndWatchResponse response() {
    return ListAndWatchResponse.newBuilder().addAllDevices(devices).build();
  }

  /**
   * Serves on the socket (deleting a stale file first).
   *
   * @return this
   */
  public TestPlugin start() {
    try {
      Files.createDirectories(socket.getParent());
      Files.deleteIfExists(socket);
      NettyServerBuilder b =
          NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket))
              .channelType(NioServerDomainSocketChannel.class)
              .bossEventLoopGroup(group)
              .workerEventLoopGroup(group)
              .executor(executor)
              .withChildOption(ChannelOption.SO_KEEPALIVE, null)
              .addService(new Service());
      if (pluginInfo != null) {
        b.addService(new WatcherRegistration());
      }
      server = b.build().start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** Stops serving (ends streams, removes the socket); the plugin can be started again. */
  public void stop() {
    if (server != null) {
      server.shutdownNow();
      try {
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      server = null;
    }
    streams.clear();
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      // ignore
    }
  }

  /**
   * Calls Register on {@code kubeletSocket} with this plugin's resource, socket file name and
   * version v1beta1.
   *
   * @param kubeletSocket the kubelet socket
   */
  public void register(Path kubeletSocket) {
    register(kubeletSocket, "v1beta1", resource, socket.getFileName().toString());
  }

  /**
   * Calls Register with explicit fields; throws StatusRuntimeException when refused.
   *
   * @param kubeletSocket the kubelet socket
   * @param version the version
   * @param resourceName the resource name
   * @param endpoint the endpoint
   */
  public void register(Path kubeletSocket, String version, String resourceName, String endpoint) {
    ManagedChannel ch = channel(kubeletSocket);
    try {
      RegistrationGrpc.newBlockingStub(ch)
          .withWaitForReady()
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .register(
              RegisterRequest.newBuilder()
                  .setVersion(version)
                  .setResourceName(resourceName)
                  .setEndpoint(endpoint)
                  .setOptions(options)
                  .build());
    } finally {
      ch.shutdownNow();
    }
  }

  private ManagedChannel channel(Path target) {
    return NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(target))
        .channelType(NioDomainSocketChannel.class)
        .eventLoopGroup(group)
        .executor(executor)
        .usePlaintext()
        .overrideAuthority("localhost")
        .withOption(ChannelOption.SO_KEEPALIVE, null)
        .build();
  }

  @Override
  public void close() {
    stop();
    executor.shutdown();
    try {
      if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  // --- default answers ---------------------------------------------------------------------

  private AllocateResponse defaultAllocate(AllocateRequest req) {
    Set<String> known = new HashSet<>();
    for (Device d : devices) {
      known.add(d.getID());
    }
    AllocateResponse.Builder out = AllocateResponse.newBuilder();
    for (ContainerAllocateRequest c : req.getContainerRequestsList()) {
      ContainerAllocateResponse.Builder r = ContainerAllocateResponse.newBuilder();
      for (String id : c.getDevicesIdsList()) {
        if (!known.contains(id)) {
          throw Status.INVALID_ARGUMENT
              .withDescription("unknown device " + id + " for " + resource)
              .asRuntimeException();
        }
        r.addDevices(
            DeviceSpec.newBuilder()
                .setHostPath("/dev/" + id)
                .setContainerPath("/dev/" + id)
                .setPermissions("rw"));
        r.addCdiDevices(CDIDevice.newBuilder().setName("example.com/test=" + id));
      }
      r.putEnvs("TEST_DEVICES", String.join(",", c.getDevicesIdsList()));
      r.addMounts(
          Mount.newBuilder()
              .setHostPath("/opt/test/lib")
              .setContainerPath("/usr/local/test")
              .setReadOnly(true));
      r.putAnnotations("example.com/devices", String.join(",", c.getDevicesIdsList()));
      out.addContainerResponses(r);
    }
    return out.build();
  }

  /** Prefers the highest-numbered available devices (so tests can tell it was asked). */
  private static PreferredAllocationResponse defaultPreferred(PreferredAllocationRequest req) {
    PreferredAllocationResponse.Builder out = PreferredAllocationResponse.newBuilder();
    for (ContainerPreferredAllocationRequest c : req.getContainerRequestsList()) {
      List<String> chosen = new ArrayList<>(c.getMustIncludeDeviceIDsList());
      List<String> avail = new ArrayList<>(c.getAvailableDeviceIDsList());
      avail.sort(null);
      for (int i = avail.size() - 1; i >= 0 && chosen.size() < c.getAllocationSize(); i--) {
        if (!chosen.contains(avail.get(i))) {
          chosen.add(avail.get(i));
        }
      }
      out.addContainerResponses(
          ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(chosen));
    }
    return out.build();
  }

  // --- gRPC services -------------------------------------------------------------------------

  private final class Service extends DevicePluginGrpc.DevicePluginImplBase {
    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> out) {
      try {
        out.onNext(optionsAnswer.apply(request));
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(e);
      }
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
      ServerCallStreamObserver<ListAndWatchResponse> s =
          (ServerCallStreamObserver<ListAndWatchResponse>) out;
      s.setOnCancelHandler(
          () -> {
            streams.remove(s);
            onStreamCancelled.run();
          });
      long delay = firstListDelayMillis;
      if (delay > 0) {
        group.schedule(
            () -> {
              synchronized (s) {
                if (!s.isCancelled()) {
                  // Known as open before the list goes out: a test that sees the list and then
                  // ends the streams must find this one.
                  streams.add(s);
                  s.onNext(listFilter.apply(response()));
                }
              }
            },
            delay,
            TimeUnit.MILLISECONDS);
        return;
      }
      synchronized (s) {
        streams.add(s); // before the list: see above
        s.onNext(listFilter.apply(response()));
      }
    }

    @Override
    public void getPreferredAllocation(
        PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> out) {
      try {
        out.onNext(preferred.apply(request));
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(e);
      }
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> out) {
      allocations.add(request);
      try {
        out.onNext(allocate.apply(request));
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(e);
      }
    }

    @Override
    public void preStartContainer(
        PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> out) {
      preStarts.add(request);
      try {
        out.onNext(preStart.apply(request));
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(e);
      }
    }
  }

  private final class WatcherRegistration
      extends io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc
          .RegistrationImplBase {
    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> out) {
      infoCalls.incrementAndGet();
      if (unansweredInfos.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        return; // the caller's deadline ends the call
      }
      out.onNext(pluginInfo);
      out.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(
        RegistrationStatus request, StreamObserver<RegistrationStatusResponse> out) {
      statuses.add(request);
      out.onNext(RegistrationStatusResponse.getDefaultInstance());
      out.onCompleted();
    }
  }
}
