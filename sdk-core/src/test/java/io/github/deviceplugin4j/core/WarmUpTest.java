package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.requests.PluginEndpoint;
import io.github.deviceplugin4j.core.internal.requests.RequestDeadlines;
import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import io.github.deviceplugin4j.core.internal.requests.SocketWarmUp;
import io.github.deviceplugin4j.core.internal.requests.V1Beta1Adapter;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import io.github.deviceplugin4j.core.internal.state.Snapshot;
import io.github.deviceplugin4j.core.internal.transport.UdsServer;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The warm-up runs the request path in process before the kubelet's first call: it may run the
 * SDK's own code, never the vendor's, and it reports nothing.
 */
class WarmUpTest {

  static final String RESOURCE = "example.com/warm";

  final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  final ExecutorService workers = Executors.newSingleThreadExecutor();
  final List<String> vendorCalls = new CopyOnWriteArrayList<>();
  final List<DevicePluginException> errors = new CopyOnWriteArrayList<>();
  final List<String> observed = new CopyOnWriteArrayList<>();
  final Observers recording =
      new Observers(
          List.of(
              new PluginObserver() {
                @Override
                public void onRpc(Rpc rpc) {
                  observed.add(rpc.method().name());
                }
              }));

  @TempDir Path tmp;

  @AfterEach
  void tearDown() {
    timer.shutdownNow();
    workers.shutdownNow();
  }

  /** Records every call of vendor code the warm-up must not make. */
  final class Vendor implements DeviceBackend, Allocator, PreferredAllocator, PreStartHook {
    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      vendorCalls.add("devices");
      return List.of();
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      vendorCalls.add("allocate");
      return ContainerAllocation.builder().build();
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) {
      vendorCalls.add("preferredAllocation");
      return List.of();
    }

    @Override
    public void preStart(List<Device> devices) {
      vendorCalls.add("preStart");
    }
  }

  /** Nothing but devices: Allocate is answered from their declared allocations. */
  record Declarative() implements DeviceBackend {
    @Override
    public String resourceName() {
      return RESOURCE;
    }

    @Override
    public List<Device> devices() {
      return List.of();
    }
  }

  PluginEndpoint endpoint(DeviceBackend backend, List<Device> devices) {
    DeviceState state =
        new DeviceState(
            List.of(new V1Beta1Adapter("v1beta1")),
            Runnable::run,
            timer,
            Duration.ZERO,
            DeviceState.KUBELET_MAX_MESSAGE_BYTES,
            new DeviceState.Events() {
              @Override
              public void invalidDevices(InvalidBackendDataException error) {
                errors.add(error);
              }

              @Override
              public void tooLarge(InvalidBackendDataException error) {
                errors.add(error);
              }

              @Override
              public void changed(Snapshot snapshot) {}

              @Override
              public void streamsGone() {}
            },
            "",
            Observers.NONE,
            null);
    state.applyNow(devices);
    Duration deadline = Duration.ofSeconds(5);
    RequestHandler handler =
        new RequestHandler(
            RESOURCE,
            backend,
            Capabilities.none(),
            state,
            workers,
            timer,
            new RequestDeadlines(deadline, deadline, deadline),
            errors::add);
    return new PluginEndpoint() {
      @Override
      public String resourceName() {
        return RESOURCE;
      }

      @Override
      public DeviceState devices() {
        return state;
      }

      @Override
      public RequestHandler requests() {
        return handler;
      }

      @Override
      public Observers observers() {
        return recording; // what the kubelet's calls report to; the warm-up must not
      }
    };
  }

  /**
   * Serves the socket warm-up's service on a real Unix socket, runs the warm-up's calls over it,
   * and returns the calls the server received, by method.
   */
  Map<String, Integer> warmUpOverSocket(PluginEndpoint plugin, int calls) throws Exception {
    V1Beta1Adapter adapter = new V1Beta1Adapter("v1beta1");
    Map<String, Integer> received = new ConcurrentHashMap<>();
    ServerInterceptor counter =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            received.merge(call.getMethodDescriptor().getBareMethodName(), 1, Integer::sum);
            return next.startCall(call, headers);
          }
        };
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    UdsServer.Standby server = null;
    try {
      server =
          UdsServer.bind(
              tmp,
              PosixFilePermissions.fromString("rw-------"),
              List.of(ServerInterceptors.intercept(adapter.warmUpService(plugin), counter)),
              group);
      List<ApiAdapter.WarmUpCall> kinds = adapter.warmUpCalls(plugin);
      SocketWarmUp.Outcome outcome =
          SocketWarmUp.run(
              server.path(),
              kinds,
              calls,
              TimeUnit.SECONDS.toNanos(30),
              TimeUnit.SECONDS.toNanos(30),
              group);
      assertThat(outcome.answered()).isEqualTo(calls);
    } finally {
      if (server != null) {
        server.discard();
      }
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }
    return received;
  }

  /** Serves a service on a real Unix socket in the test's directory and calls it over a channel. */
  void overSocket(ServerServiceDefinition service, Consumer<ManagedChannel> calls)
      throws Exception {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    UdsServer.Standby server = null;
    ManagedChannel channel = null;
    try {
      server =
          UdsServer.bind(
              tmp, PosixFilePermissions.fromString("rw-------"), List.of(service), group);
      channel =
          NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(server.path()))
              .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
              .eventLoopGroup(group)
              .usePlaintext()
              .build();
      calls.accept(channel);
    } finally {
      if (channel != null) {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
      if (server != null) {
        server.discard();
      }
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Vendor calls are offloaded to the (single) worker: whatever was submitted has run after this.
   */
  void drainWorkers() throws Exception {
    workers.submit(() -> {}).get(10, TimeUnit.SECONDS);
  }

  static Device fpga(String id, Health health) {
    return Device.builder(id)
        .health(health)
        .deviceNode(new DeviceNode("/dev/" + id, "/dev/" + id, "rw"))
        .env("FPGA_PORT", id)
        .annotation("example.com/port", id)
        .cdiDevice("example.com/fpga=" + id)
        .build();
  }

  @Test
  void noAllocatorPreferredAllocatorOrPreStartHookIsCalled() throws Exception {
    PluginEndpoint plugin =
        endpoint(new Vendor(), List.of(fpga("p0", Health.HEALTHY), fpga("p1", Health.HEALTHY)));

    new V1Beta1Adapter("v1beta1").warmUp(plugin, 50);
    drainWorkers();

    assertThat(vendorCalls).isEmpty();
    assertThat(errors).isEmpty();
  }

  @Test
  void aDeclarativeAllocateRunsThroughTheServiceWithoutAnError() {
    PluginEndpoint plugin =
        endpoint(
            new Declarative(), List.of(fpga("p0", Health.UNHEALTHY), fpga("p1", Health.HEALTHY)));

    new V1Beta1Adapter("v1beta1").warmUp(plugin, 50);

    assertThat(errors).isEmpty();
    assertThat(plugin.requests().declarativeAllocate()).isTrue();
  }

  @Test
  void withNoHealthyDeviceOnlyTheMessagesAreExercised() throws Exception {
    PluginEndpoint plugin = endpoint(new Vendor(), List.of(fpga("p0", Health.UNHEALTHY)));

    new V1Beta1Adapter("v1beta1").warmUp(plugin, 10);
    new V1Beta1Adapter("v1beta1").warmUp(endpoint(new Declarative(), List.of()), 10);
    drainWorkers();

    assertThat(vendorCalls).isEmpty();
    assertThat(errors).isEmpty();
  }

  @Test
  void overASocket_aDeclarativeAllocateIsCalledThroughTheTransport_andNothingIsObserved()
      throws Exception {
    PluginEndpoint plugin =
        endpoint(
            new Declarative(), List.of(fpga("p0", Health.UNHEALTHY), fpga("p1", Health.HEALTHY)));

    Map<String, Integer> received = warmUpOverSocket(plugin, 25);

    assertThat(received).containsOnly(Map.entry("Allocate", 25));
    assertThat(observed).as("observer events of warm-up calls").isEmpty();
    assertThat(errors).isEmpty();
    try (var left = Files.list(tmp)) {
      assertThat(left).as("what the warm-up's server left in the directory").isEmpty();
    }
  }

  @Test
  void overASocket_aDeclarativeAllocateWithNoHealthyDevice_onlyTheOptions() throws Exception {
    PluginEndpoint plugin = endpoint(new Declarative(), List.of(fpga("p0", Health.UNHEALTHY)));

    Map<String, Integer> received = warmUpOverSocket(plugin, 10);

    assertThat(received).containsOnly(Map.entry("GetDevicePluginOptions", 10));
    assertThat(observed).isEmpty();
    assertThat(errors).isEmpty();
  }

  @Test
  void overASocket_vendorAllocationCodeIsNeverCalled_onlyTheOptions() throws Exception {
    PluginEndpoint plugin =
        endpoint(new Vendor(), List.of(fpga("p0", Health.HEALTHY), fpga("p1", Health.HEALTHY)));

    Map<String, Integer> received = warmUpOverSocket(plugin, 25);
    drainWorkers();

    assertThat(received).containsOnly(Map.entry("GetDevicePluginOptions", 25));
    assertThat(vendorCalls).isEmpty();
    assertThat(observed).isEmpty();
  }

  @Test
  void aRealCallThroughTheSameServiceIsObserved_soTheCheckAboveCanFail() throws Exception {
    PluginEndpoint plugin = endpoint(new Declarative(), List.of(fpga("p0", Health.HEALTHY)));
    overSocket(
        new V1Beta1Adapter("v1beta1").devicePluginService(plugin),
        channel ->
            io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc.newBlockingStub(channel)
                .getDevicePluginOptions(
                    io.github.deviceplugin4j.api.v1beta1.Empty.getDefaultInstance()));
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(observed).containsExactly("GET_DEVICE_PLUGIN_OPTIONS"));
  }
}
