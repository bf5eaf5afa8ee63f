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
import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.PreStartHook;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.ResourceStatus;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A training run for an application class-data-sharing (AppCDS) archive, for image builds, where
 * there is no kubelet and no hardware. Started from a plugin's own jar, it walks the code a plugin
 * runs at start and on every kubelet call, and exits. The example images list the classes it loaded
 * and write them into a static archive, which takes the place of the JDK's default one; the plugin
 * started with {@code -XX:SharedArchiveFile} maps those classes instead of loading and verifying
 * them (about half of its start-up time; docs/performance.md):
 *
 * <pre>
 * java &lt;the plugin's flags&gt; -XX:DumpLoadedClassList=/tmp/classes.lst \
 *     -cp /opt/deviceplugin4j/plugin.jar io.github.deviceplugin4j.examples.common.CdsTraining
 * java &lt;the plugin's flags&gt; -Xshare:dump -XX:SharedClassListFile=/tmp/classes.lst \
 *     -XX:SharedArchiveFile=/opt/deviceplugin4j/app.jsa -cp /opt/deviceplugin4j/plugin.jar
 * </pre>
 *
 * <p>{@code -XX:ArchiveClassesAtExit=<archive>} on the training run writes a dynamic archive in one
 * step instead; it maps the JDK's whole default archive under it, 1-1.5 MiB more resident memory
 * (measured with the FPGA example).
 *
 * <p>What it runs, in a temporary directory: a plugin with one simulated device in legacy mode,
 * called as the kubelet calls it (options, ListAndWatch, GetPreferredAllocation, Allocate,
 * PreStartContainer) over its Unix socket; its registration, with {@code kubelet.sock} linked to
 * the plugin's own socket (the Register call crosses the whole gRPC client and server path and is
 * refused, as this plugin serves no Registration service), with its HTTP endpoint on a loopback
 * port asked for {@code /metrics}, {@code /healthz} and {@code /readyz}; then the same plugin in
 * plugin-watcher mode, asked for its info and told it is registered. The archive applies only to
 * the same jar at the same path, with compatible flags: train with the image's own flags.
 */
public final class CdsTraining {

  static final String RESOURCE = "training.deviceplugin4j.io/device";
  static final long STEP_SECONDS = 10;

  private CdsTraining() {}

  /**
   * Runs the training and exits with status 0, or 1 when a step failed.
   *
   * @param args none
   */
  public static void main(String[] args) {
    try {
      Path dir = Files.createTempDirectory(Path.of("/tmp"), "dp4jcds");
      try {
        run(dir);
      } finally {
        deleteTree(dir);
      }
      System.out.println("CDS training run complete");
    } catch (Exception | AssertionError e) {
      System.err.println("CDS training run failed: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  /**
   * Runs the training in a directory.
   *
   * @param dir an empty, short directory (Unix socket paths are limited to 107 bytes)
   * @throws Exception when a step fails
   */
  static void run(Path dir) throws Exception {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    try {
      legacy(dir.resolve("dp"), group);
      watcher(dir.resolve("dp2"), dir.resolve("reg"), group);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(STEP_SECONDS, TimeUnit.SECONDS);
    }
  }

  private static void legacy(Path pluginDir, EventLoopGroup group) throws Exception {
    Files.createDirectories(pluginDir);
    DevicePluginHost.Builder builder =
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new Backend());
    PluginMetrics.enable(
        builder, Optional.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
    try (DevicePluginHost host = builder.start()) {
      Path socket = host.status(RESOURCE).socket();
      ManagedChannel ch = channel(socket, group);
      try {
        callAsTheKubelet(ch);
      } finally {
        ch.shutdownNow().awaitTermination(STEP_SECONDS, TimeUnit.SECONDS);
      }
      InetSocketAddress http = host.httpAddress().orElseThrow();
      for (String path : List.of("/metrics", "/healthz", "/readyz")) {
        get(http, path);
      }
      Files.createSymbolicLink(pluginDir.resolve("kubelet.sock"), socket);
      await(
          () -> host.status(RESOURCE).lastError().isPresent(),
          "a registration attempt on kubelet.sock");
    }
  }

  /**
   * One GET over a plain socket, as a probe or a scraper sends it; the answer is read and dropped.
   */
  private static void get(InetSocketAddress address, String path) throws IOException {
    try (Socket socket = new Socket(address.getAddress(), address.getPort())) {
      socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(STEP_SECONDS));
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

  private static void watcher(Path pluginDir, Path registryDir, EventLoopGroup group)
      throws Exception {
    Files.createDirectories(pluginDir);
    Files.createDirectories(registryDir);
    try (DevicePluginHost host =
        DevicePluginHost.builder()
            .pluginDir(pluginDir)
            .registryDir(registryDir)
            .registrationMode(RegistrationMode.PLUGIN_WATCHER)
            .backend(new Backend())
            .start()) {
      ResourceStatus status = host.status(RESOURCE);
      ManagedChannel ch = channel(status.socket(), group);
      try {
        RegistrationGrpc.RegistrationBlockingStub registration =
            RegistrationGrpc.newBlockingStub(ch).withDeadlineAfter(STEP_SECONDS, TimeUnit.SECONDS);
        PluginInfo info = registration.getInfo(InfoRequest.getDefaultInstance());
        if (!RESOURCE.equals(info.getName())) {
          throw new IllegalStateException("the plugin watcher socket answered " + info);
        }
        registration.notifyRegistrationStatus(
            RegistrationStatus.newBuilder().setPluginRegistered(true).build());
        callAsTheKubelet(ch);
      } finally {
        ch.shutdownNow().awaitTermination(STEP_SECONDS, TimeUnit.SECONDS);
      }
      await(() -> host.status(RESOURCE).registered(), "the plugin-watcher registration");
    }
  }

  /** The kubelet's calls on a plugin, in the order of a pod admission. */
  private static void callAsTheKubelet(ManagedChannel ch) throws Exception {
    DevicePluginGrpc.DevicePluginBlockingStub stub =
        DevicePluginGrpc.newBlockingStub(ch).withDeadlineAfter(STEP_SECONDS, TimeUnit.SECONDS);
    stub.getDevicePluginOptions(Empty.getDefaultInstance());
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
      ListAndWatchResponse list = first.get(STEP_SECONDS, TimeUnit.SECONDS);
      if (list.getDevicesCount() != 1) {
        throw new IllegalStateException("the training plugin listed " + list);
      }
    } finally {
      stream.cancel(null);
    }
    stub.getPreferredAllocation(
        io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest.newBuilder()
            .addContainerRequests(
                ContainerPreferredAllocationRequest.newBuilder()
                    .addAvailableDeviceIDs(Backend.ID)
                    .setAllocationSize(1))
            .build());
    stub.allocate(
        AllocateRequest.newBuilder()
            .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(Backend.ID))
            .build());
    stub.preStartContainer(PreStartContainerRequest.newBuilder().addDevicesIds(Backend.ID).build());
  }

  private static ManagedChannel channel(Path socket, EventLoopGroup group) {
    return NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
        .channelType(NioDomainSocketChannel.class)
        .eventLoopGroup(group)
        .usePlaintext()
        .withOption(ChannelOption.SO_KEEPALIVE, null)
        .build();
  }

  private static void await(java.util.function.BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      Thread.sleep(10);
    }
  }

  private static void deleteTree(Path root) throws IOException {
    List<Path> paths = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(root)) {
      walk.forEach(paths::add);
    }
    paths.sort(Comparator.reverseOrder());
    for (Path p : paths) {
      Files.deleteIfExists(p);
    }
  }

  /** One simulated device, with every backend capability, so that every core path runs. */
  static final class Backend implements DeviceBackend, Allocator, PreferredAllocator, PreStartHook {
    static final String ID = "training-0";

    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return List.of(Device.builder(ID).numaNode(0).deviceNode(DeviceNode.rw("/dev/null")).build());
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      return request.defaultAllocation().toBuilder().env("TRAINING_DEVICES", ID).build();
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) {
      return List.of(ID);
    }

    @Override
    public void preStart(List<Device> devices) {
      // nothing to prepare
    }
  }
}
