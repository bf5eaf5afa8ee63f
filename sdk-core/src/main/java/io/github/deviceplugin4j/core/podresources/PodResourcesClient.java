package io.github.deviceplugin4j.core.podresources;

import io.github.deviceplugin4j.api.podresources.v1.AllocatableResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.GetPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.GetPodResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.ListPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.NUMANode;
import io.github.deviceplugin4j.api.podresources.v1.PodResourcesListerGrpc;
import io.github.deviceplugin4j.api.podresources.v1.TopologyInfo;
import io.github.deviceplugin4j.core.internal.Threads;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A client of the kubelet's PodResources API ({@code v1.PodResourcesLister}) on its Unix socket.
 * Thread-safe; close it when done (it owns one event loop thread).
 *
 * <pre>{@code
 * try (PodResourcesClient client = PodResourcesClient.connect()) {
 *   Optional<DeviceOwner> owner = client.ownerOf("vendor.example.com/fpga", "port0");
 * }
 * }</pre>
 *
 * <p>The kubelet rate-limits this service (about 100 calls per second, bursts of 10); a call over
 * the limit fails with {@link PodResourcesException#code()} {@code RESOURCE_EXHAUSTED}.
 */
public final class PodResourcesClient implements AutoCloseable {

  /** The kubelet's default PodResources socket. */
  public static final Path DEFAULT_SOCKET = Path.of("/var/lib/kubelet/pod-resources/kubelet.sock");

  /** Environment variable overriding the socket for {@link #connect()}. */
  public static final String ENV_SOCKET = "POD_RESOURCES_SOCKET";

  /**
   * Default limit of a response, 16 MiB: a {@code List} on a large node exceeds gRPC's default of 4
   * MiB (every pod and container with its devices, CPUs and memory).
   */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

  private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  private final Path socket;
  private final Duration timeout;
  private final int maxMessageBytes;
  private final EventLoopGroup group;
  private final ExecutorService executor;
  private final ManagedChannel channel;

  /** Set once the kubelet showed it does not serve {@code Get}; {@code List} answers then. */
  private volatile boolean getUnavailable;

  private PodResourcesClient(Path socket, Duration timeout, int maxMessageBytes) {
    this.socket = socket;
    this.timeout = timeout;
    this.maxMessageBytes = maxMessageBytes;
    this.group =
        new MultiThreadIoEventLoopGroup(
            1, Threads.factory("podresources-eventloop", true), NioIoHandler.newFactory());
    this.executor = Executors.newCachedThreadPool(Threads.factory("podresources", true));
    this.channel =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(group)
            .executor(executor)
            .offloadExecutor(executor)
            .usePlaintext()
            .maxInboundMessageSize(maxMessageBytes)
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .build();
  }

  /**
   * A client on the socket named by the environment variable {@code POD_RESOURCES_SOCKET}, else
   * {@code /var/lib/kubelet/pod-resources/kubelet.sock}. Connects lazily.
   *
   * @return the client
   */
  public static PodResourcesClient connect() {
    String env = System.getenv(ENV_SOCKET);
    return connect(env == null || env.isBlank() ? DEFAULT_SOCKET : Path.of(env.trim()));
  }

  /**
   * A client on a socket, with a 10 second deadline per call. Connects lazily.
   *
   * @param socket the kubelet's PodResources socket
   * @return the client
   */
  public static PodResourcesClient connect(Path socket) {
    return connect(socket, DEFAULT_TIMEOUT);
  }

  /**
   * A client on a socket with a deadline per call, receiving responses up to {@value
   * #DEFAULT_MAX_MESSAGE_BYTES} bytes. Connects lazily.
   *
   * @param socket the kubelet's PodResources socket
   * @param timeout deadline of each call
   * @return the client
   */
  public static PodResourcesClient connect(Path socket, Duration timeout) {
    return connect(socket, timeout, DEFAULT_MAX_MESSAGE_BYTES);
  }

  /**
   * A client on a socket with a deadline per call and a limit on the size of a response. A response
   * over the limit fails the call with {@code RESOURCE_EXHAUSTED}. Connects lazily.
   *
   * @param socket the kubelet's PodResources socket
   * @param timeout deadline of each call
   * @param maxMessageBytes the largest response accepted, in bytes
   * @return the client
   */
  public static PodResourcesClient connect(Path socket, Duration timeout, int maxMessageBytes) {
    Objects.requireNonNull(socket, "socket");
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be positive, was " + timeout);
    }
    if (maxMessageBytes < 1) {
      throw new IllegalArgumentException(
          "maxMessageBytes must be positive, was " + maxMessageBytes);
    }
    return new PodResourcesClient(socket.toAbsolutePath(), timeout, maxMessageBytes);
  }

  /**
   * The socket this client talks to.
   *
   * @return the path
   */
  public Path socket() {
    return socket;
  }

  /**
   * Every pod with the resources assigned to its containers ({@code List}).
   *
   * @return the pods
   * @throws PodResourcesException when the call fails
   */
  public List<PodResources> list() {
    return call(
        "List",
        () ->
            stub().list(ListPodResourcesRequest.getDefaultInstance()).getPodResourcesList().stream()
                .map(PodResourcesClient::convert)
                .toList());
  }

  /**
   * Every device the kubelet can allocate, per resource ({@code GetAllocatableResources}).
   *
   * @return allocatable devices
   * @throws PodResourcesException when the call fails
   */
  public List<ContainerDevices> allocatable() {
    return call(
        "GetAllocatableResources",
        () ->
            stub()
                .getAllocatableResources(AllocatableResourcesRequest.getDefaultInstance())
                .getDevicesList()
                .stream()
                .map(PodResourcesClient::convert)
                .toList());
  }

  /**
   * One pod's resources. Asks {@code Get}, which returns one pod instead of every pod of the node;
   * where the kubelet does not offer it (before Kubernetes 1.27, or with the {@code
   * KubeletPodResourcesGet} feature off, the default before 1.34), the pod is looked up in {@code
   * List}, and this client asks {@code List} directly from then on.
   *
   * @param namespace the pod's namespace
   * @param name the pod's name
   * @return the pod, or empty when the kubelet does not know it
   * @throws PodResourcesException when the call fails otherwise
   */
  public Optional<PodResources> get(String namespace, String name) {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    if (getUnavailable) {
      return fromList(namespace, name);
    }
    GetPodResourcesRequest request =
        GetPodResourcesRequest.newBuilder().setPodNamespace(namespace).setPodName(name).build();
    try {
      GetPodResourcesResponse response = stub().get(request);
      return response.hasPodResources()
          ? Optional.of(convert(response.getPodResources()))
          : Optional.empty();
    } catch (StatusRuntimeException e) {
      Status s = e.getStatus();
      String d = String.valueOf(s.getDescription()).toLowerCase(java.util.Locale.ROOT);
      if (s.getCode() == Status.Code.UNIMPLEMENTED || d.contains("get method disabled")) {
        getUnavailable = true;
        return fromList(namespace, name);
      }
      if (s.getCode() == Status.Code.NOT_FOUND || d.contains("not found")) {
        return Optional.empty();
      }
      throw failure("Get", e);
    }
  }

  private Optional<PodResources> fromList(String namespace, String name) {
    return list().stream()
        .filter(p -> p.namespace().equals(namespace) && p.name().equals(name))
        .findFirst();
  }

  /**
   * Whether {@link #get} found that the kubelet does not serve {@code Get} and uses {@code List}.
   *
   * @return true after the first such call
   */
  public boolean usesListForGet() {
    return getUnavailable;
  }

  /**
   * Which container holds a device, from {@link #list()} (the kubelet offers no lookup by device:
   * {@code Get} needs the pod's name, see {@link #ownerOf(String, String, String, String)}).
   *
   * @param resourceName e.g. {@code vendor.example.com/fpga}
   * @param deviceId the device ID
   * @return the owner, or empty when no container holds the device
   * @throws PodResourcesException when the call fails
   */
  public Optional<DeviceOwner> ownerOf(String resourceName, String deviceId) {
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(deviceId, "deviceId");
    for (PodResources pod : list()) {
      Optional<DeviceOwner> owner = owner(pod, resourceName, deviceId);
      if (owner.isPresent()) {
        return owner;
      }
    }
    return Optional.empty();
  }

  /**
   * Which container of a known pod holds a device, from {@link #get} (one pod, not the node's whole
   * list, where the kubelet offers {@code Get}).
   *
   * @param resourceName e.g. {@code vendor.example.com/fpga}
   * @param deviceId the device ID
   * @param namespace the pod's namespace
   * @param podName the pod's name
   * @return the owner, or empty when the pod is unknown or none of its containers holds the device
   * @throws PodResourcesException when the call fails
   */
  public Optional<DeviceOwner> ownerOf(
      String resourceName, String deviceId, String namespace, String podName) {
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(deviceId, "deviceId");
    return get(namespace, podName).flatMap(pod -> owner(pod, resourceName, deviceId));
  }

  private static Optional<DeviceOwner> owner(
      PodResources pod, String resourceName, String deviceId) {
    for (ContainerResources c : pod.containers()) {
      for (ContainerDevices d : c.devices()) {
        if (d.resourceName().equals(resourceName) && d.deviceIds().contains(deviceId)) {
          return Optional.of(new DeviceOwner(pod.namespace(), pod.name(), c.name()));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Which containers use a DRA device, from {@link #list}: every container whose claims hold the
   * device (a claim may be shared by several pods, and a device with consumable capacity by several
   * claims). A DRA driver's exporter uses it to label a device's metrics with its pods.
   *
   * @param driverName the DRA driver
   * @param poolName the device's pool (for node-local devices, the node name)
   * @param deviceName the device's name in its pool
   * @return the owners, in the kubelet's order; empty when no running container uses it
   * @throws PodResourcesException when the call fails
   */
  public List<DeviceOwner> ownersOfDraDevice(
      String driverName, String poolName, String deviceName) {
    Objects.requireNonNull(driverName, "driverName");
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    List<DeviceOwner> out = new java.util.ArrayList<>();
    for (PodResources pod : list()) {
      for (ContainerResources c : pod.containers()) {
        boolean uses =
            c.dynamicResources().stream()
                .flatMap(d -> d.claimResources().stream())
                .anyMatch(
                    r ->
                        r.driverName().equals(driverName)
                            && r.poolName().equals(poolName)
                            && r.deviceName().equals(deviceName));
        if (uses) {
          out.add(new DeviceOwner(pod.namespace(), pod.name(), c.name()));
        }
      }
    }
    return out;
  }

  /** Closes the connection and stops the client's threads. */
  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
    executor.shutdownNow();
  }

  private PodResourcesListerGrpc.PodResourcesListerBlockingStub stub() {
    return PodResourcesListerGrpc.newBlockingStub(channel)
        .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  private <T> T call(String method, Supplier<T> call) {
    try {
      return call.get();
    } catch (StatusRuntimeException e) {
      throw failure(method, e);
    }
  }

  private PodResourcesException failure(String method, StatusRuntimeException e) {
    Status s = e.getStatus();
    String hint = "";
    if (s.getCode() == Status.Code.UNAVAILABLE && !Files.exists(socket)) {
      hint = " (the socket does not exist: is the kubelet running and " + socket + " mounted?)";
    } else if (s.getCode() == Status.Code.RESOURCE_EXHAUSTED
        && isOverSizeLimit(String.valueOf(s.getDescription()))) {
      hint =
          " (the response is over this client's limit of "
              + maxMessageBytes
              + " bytes; connect with a larger maxMessageBytes)";
    } else if (s.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
      hint = " (the kubelet rate-limits PodResources calls; call less often)";
    }
    return new PodResourcesException(
        "PodResources "
            + method
            + " on "
            + socket
            + " failed: "
            + s.getCode()
            + (s.getDescription() == null ? "" : ": " + s.getDescription())
            + hint,
        s.getCode().name(),
        e);
  }

  /** gRPC's wording for a message over the receive limit (it changed between versions). */
  private static boolean isOverSizeLimit(String description) {
    return description.contains("exceeds maximum size")
        || description.contains("message larger than max");
  }

  private static PodResources convert(io.github.deviceplugin4j.api.podresources.v1.PodResources p) {
    return new PodResources(
        p.getNamespace(),
        p.getName(),
        p.getContainersList().stream()
            .map(
                c ->
                    new ContainerResources(
                        c.getName(),
                        c.getDevicesList().stream().map(PodResourcesClient::convert).toList(),
                        c.getCpuIdsList(),
                        c.getDynamicResourcesList().stream()
                            .map(PodResourcesClient::convert)
                            .toList()))
            .toList());
  }

  private static DynamicResource convert(
      io.github.deviceplugin4j.api.podresources.v1.DynamicResource d) {
    return new DynamicResource(
        d.getClaimName(),
        d.getClaimNamespace(),
        d.getClaimResourcesList().stream()
            .map(
                r ->
                    new ClaimResource(
                        r.getDriverName(),
                        r.getPoolName(),
                        r.getDeviceName(),
                        r.getCdiDevicesList().stream()
                            .map(io.github.deviceplugin4j.api.podresources.v1.CDIDevice::getName)
                            .toList(),
                        r.hasShareId() ? Optional.of(r.getShareId()) : Optional.empty()))
            .toList());
  }

  private static ContainerDevices convert(
      io.github.deviceplugin4j.api.podresources.v1.ContainerDevices d) {
    TopologyInfo t = d.getTopology();
    return new ContainerDevices(
        d.getResourceName(),
        d.getDeviceIdsList(),
        t.getNodesList().stream().map(NUMANode::getID).toList());
  }
}
