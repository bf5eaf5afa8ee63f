package io.github.deviceplugin4j.core.internal.requests;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.CDIDevice;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationResponse;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginApi;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.DeviceSpec;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.api.v1beta1.NUMANode;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerResponse;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.github.deviceplugin4j.api.v1beta1.TopologyInfo;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Mount;
import io.github.deviceplugin4j.core.PluginObserver;
import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.state.Subscriber;
import io.grpc.Drainable;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.IntSupplier;

/** The {@code v1beta1} device plugin API. */
public final class V1Beta1Adapter implements ApiAdapter {

  private final String version;

  /** The adapter sending {@code version} to the kubelet; {@code "v1beta1"} in production. */
  public V1Beta1Adapter(String version) {
    this.version = version;
  }

  @Override
  public String version() {
    return version;
  }

  @Override
  public String serviceName() {
    return DevicePluginGrpc.SERVICE_NAME;
  }

  @Override
  public Object encodeDevices(List<Device> devices) {
    ListAndWatchResponse.Builder b = ListAndWatchResponse.newBuilder();
    for (Device d : devices) {
      io.github.deviceplugin4j.api.v1beta1.Device.Builder wire =
          io.github.deviceplugin4j.api.v1beta1.Device.newBuilder()
              .setID(d.id())
              .setHealth(d.health().wireValue());
      if (!d.numaNodes().isEmpty()) {
        TopologyInfo.Builder topology = TopologyInfo.newBuilder();
        d.numaNodes().forEach(n -> topology.addNodes(NUMANode.newBuilder().setID(n)));
        wire.setTopology(topology);
      }
      b.addDevices(wire);
    }
    return b.build();
  }

  @Override
  public int encodedSize(Object message) {
    return ((ListAndWatchResponse) message).getSerializedSize();
  }

  @Override
  public ServerServiceDefinition devicePluginService(PluginEndpoint plugin) {
    return new Service(plugin, plugin.observers()).bindService();
  }

  @Override
  public String registerMethod() {
    return RegistrationGrpc.getRegisterMethod().getFullMethodName();
  }

  @Override
  public byte[] registerRequest(
      String resourceName,
      String endpoint,
      boolean preStartRequired,
      boolean preferredAllocationAvailable) {
    return RegisterRequest.newBuilder()
        .setVersion(version)
        .setEndpoint(endpoint)
        .setResourceName(resourceName)
        .setOptions(
            DevicePluginOptions.newBuilder()
                .setPreStartRequired(preStartRequired)
                .setGetPreferredAllocationAvailable(preferredAllocationAvailable))
        .build()
        .toByteArray();
  }

  @Override
  public String optionsMethod() {
    return DevicePluginGrpc.getGetDevicePluginOptionsMethod().getFullMethodName();
  }

  @Override
  public String listAndWatchMethod() {
    return DevicePluginGrpc.getListAndWatchMethod().getFullMethodName();
  }

  @Override
  public ServerServiceDefinition warmUpService(PluginEndpoint plugin) {
    return new Service(plugin, Observers.NONE).bindService();
  }

  @Override
  public List<WarmUpCall> warmUpCalls(PluginEndpoint plugin) {
    // Allocate alone when it is declarative: the transport's per-call path is the same for every
    // call, and all of the calls then also compile Allocate's own part (its messages, the handler).
    Device sample = healthySample(plugin);
    if (sample != null && plugin.requests().declarativeAllocate()) {
      return List.of(
          new WarmUpCall(
              DevicePluginGrpc.getAllocateMethod().getFullMethodName(),
              allocateRequest(sample.id()).toByteArray()));
    }
    return List.of(
        new WarmUpCall(
            DevicePluginGrpc.getGetDevicePluginOptionsMethod().getFullMethodName(),
            Empty.getDefaultInstance().toByteArray()));
  }

  private static Device healthySample(PluginEndpoint plugin) {
    return plugin.devices().current().devices().stream()
        .filter(Device::isHealthy)
        .findFirst()
        .orElse(null);
  }

  private static AllocateRequest allocateRequest(String id) {
    return AllocateRequest.newBuilder()
        .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(id))
        .build();
  }

  @Override
  public void warmUp(PluginEndpoint plugin, int rounds) {
    // The map fields of ContainerAllocateResponse need the file's descriptor, built on first use:
    // the largest part of a cold Allocate.
    DevicePluginApi.getDescriptor();
    Service service = new Service(plugin, Observers.NONE);
    Device sample = healthySample(plugin);
    String id = sample == null ? "warm-up" : sample.id();
    boolean allocate = sample != null && plugin.requests().declarativeAllocate();
    ContainerAllocation allocation =
        sample == null
            ? ContainerAllocation.builder()
                .deviceNode(new DeviceNode("/dev/null", "/dev/null", "rw"))
                .mount(new Mount("/tmp", "/tmp", true))
                .env("WARM_UP", "1")
                .annotation("example.com/warm-up", "1")
                .cdiDevice("example.com/class=warm-up")
                .build()
            : sample.allocation();
    AllocateRequest allocateRequest = allocateRequest(id);
    for (int i = 0; i < rounds; i++) {
      call(
          DevicePluginGrpc.getGetDevicePluginOptionsMethod(),
          Empty.getDefaultInstance(),
          service::getDevicePluginOptions);
      if (allocate) {
        call(DevicePluginGrpc.getAllocateMethod(), allocateRequest, service::allocate);
      } else {
        call(
            DevicePluginGrpc.getAllocateMethod(),
            allocateRequest,
            (request, out) -> {
              out.onNext(
                  AllocateResponse.newBuilder().addContainerResponses(toWire(allocation)).build());
              out.onCompleted();
            });
      }
      call(
          DevicePluginGrpc.getGetPreferredAllocationMethod(),
          PreferredAllocationRequest.newBuilder()
              .addContainerRequests(
                  ContainerPreferredAllocationRequest.newBuilder()
                      .addAvailableDeviceIDs(id)
                      .setAllocationSize(1))
              .build(),
          (request, out) -> {
            out.onNext(
                PreferredAllocationResponse.newBuilder()
                    .addContainerResponses(
                        ContainerPreferredAllocationResponse.newBuilder()
                            .addAllDeviceIDs(
                                request.getContainerRequests(0).getAvailableDeviceIDsList()))
                    .build());
            out.onCompleted();
          });
      call(
          DevicePluginGrpc.getPreStartContainerMethod(),
          PreStartContainerRequest.newBuilder().addDevicesIds(id).build(),
          (request, out) -> {
            out.onNext(PreStartContainerResponse.getDefaultInstance());
            out.onCompleted();
          });
    }
  }

  /**
   * One call as the server sees it: the request parsed from its bytes, the handler run, the answer
   * written out the way gRPC's framer writes it.
   */
  private static <Q, R> void call(
      MethodDescriptor<Q, R> method, Q request, BiConsumer<Q, StreamObserver<R>> handler) {
    Q parsed = method.parseRequest(method.streamRequest(request));
    handler.accept(
        parsed,
        new StreamObserver<R>() {
          @Override
          public void onNext(R value) {
            try (InputStream in = method.streamResponse(value)) {
              if (in instanceof Drainable d) {
                d.drainTo(OutputStream.nullOutputStream());
              } else {
                in.transferTo(OutputStream.nullOutputStream());
              }
            } catch (IOException e) {
              throw new IllegalStateException("cannot write " + method.getFullMethodName(), e);
            }
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
  }

  static ContainerAllocateResponse toWire(ContainerAllocation a) {
    ContainerAllocateResponse.Builder b = ContainerAllocateResponse.newBuilder();
    b.putAllEnvs(a.env());
    for (Mount m : a.mounts()) {
      b.addMounts(
          io.github.deviceplugin4j.api.v1beta1.Mount.newBuilder()
              .setContainerPath(m.containerPath())
              .setHostPath(m.hostPath())
              .setReadOnly(m.readOnly()));
    }
    for (DeviceNode n : a.deviceNodes()) {
      b.addDevices(
          DeviceSpec.newBuilder()
              .setContainerPath(n.containerPath())
              .setHostPath(n.hostPath())
              .setPermissions(n.permissions()));
    }
    b.putAllAnnotations(a.annotations());
    for (String cdi : a.cdiDevices()) {
      b.addCdiDevices(CDIDevice.newBuilder().setName(cdi));
    }
    return b.build();
  }

  /** The DevicePlugin service for one resource. */
  private final class Service extends DevicePluginGrpc.DevicePluginImplBase {
    private final PluginEndpoint plugin;
    private final Observers observers;

    /** Reports every call to {@code observers}: {@link Observers#NONE} for the warm-up. */
    Service(PluginEndpoint plugin, Observers observers) {
      this.plugin = plugin;
      this.observers = observers;
    }

    /** The call's start, when it is observed. */
    private long start() {
      return observers.enabled() ? System.nanoTime() : 0;
    }

    /** Reports a finished call; nothing is built when there are no observers. */
    private void observed(
        PluginObserver.Method method, Status.Code code, long startNanos, int devices) {
      if (observers.enabled()) {
        observers.rpcAfterAnswer(
            new PluginObserver.Rpc(
                plugin.resourceName(),
                method,
                code.name(),
                System.nanoTime() - startNanos,
                devices));
      }
    }

    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> out) {
      long start = start();
      out.onNext(
          DevicePluginOptions.newBuilder()
              .setPreStartRequired(plugin.requests().preStartRequired())
              .setGetPreferredAllocationAvailable(plugin.requests().preferredAllocationAvailable())
              .build());
      out.onCompleted();
      observed(PluginObserver.Method.GET_DEVICE_PLUGIN_OPTIONS, Status.Code.OK, start, 0);
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
      Subscriber.attach(
          (ServerCallStreamObserver<ListAndWatchResponse>) out,
          s -> (ListAndWatchResponse) s.wire(V1Beta1Adapter.this),
          s -> s.encodedSize(V1Beta1Adapter.this),
          plugin.devices());
    }

    @Override
    public void getPreferredAllocation(
        PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> out) {
      long start = start();
      List<RequestHandler.PreferredQuery> queries = new ArrayList<>();
      for (ContainerPreferredAllocationRequest r : request.getContainerRequestsList()) {
        queries.add(
            new RequestHandler.PreferredQuery(
                r.getAvailableDeviceIDsList(),
                r.getMustIncludeDeviceIDsList(),
                r.getAllocationSize()));
      }
      answer(
          plugin.requests().preferred(queries),
          out,
          answers -> {
            PreferredAllocationResponse.Builder b = PreferredAllocationResponse.newBuilder();
            for (List<String> ids : answers) {
              b.addContainerResponses(
                  ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(ids));
            }
            return b.build();
          },
          PluginObserver.Method.GET_PREFERRED_ALLOCATION,
          start,
          () -> preferredDevices(request));
    }

    /** Device IDs a preferred-allocation request names: available ones, of every container. */
    private int preferredDevices(PreferredAllocationRequest request) {
      return observers.enabled()
          ? request.getContainerRequestsList().stream()
              .mapToInt(ContainerPreferredAllocationRequest::getAvailableDeviceIDsCount)
              .sum()
          : 0;
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> out) {
      long start = start();
      List<List<String>> containers = new ArrayList<>();
      int ids = 0;
      for (ContainerAllocateRequest r : request.getContainerRequestsList()) {
        containers.add(r.getDevicesIdsList());
        ids += r.getDevicesIdsCount();
      }
      int devices = ids;
      answer(
          plugin.requests().allocate(containers),
          out,
          allocations -> {
            AllocateResponse.Builder b = AllocateResponse.newBuilder();
            allocations.forEach(a -> b.addContainerResponses(toWire(a)));
            return b.build();
          },
          PluginObserver.Method.ALLOCATE,
          start,
          () -> devices);
    }

    @Override
    public void preStartContainer(
        PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> out) {
      long start = start();
      answer(
          plugin.requests().preStart(request.getDevicesIdsList()),
          out,
          ignored -> PreStartContainerResponse.getDefaultInstance(),
          PluginObserver.Method.PRE_START_CONTAINER,
          start,
          request::getDevicesIdsCount);
    }

    /**
     * Answers a call when the request handler's result completes: the reply, or the failure's
     * status; then reports the call.
     */
    private <T, R> void answer(
        CompletableFuture<T> result,
        StreamObserver<R> out,
        Function<T, R> reply,
        PluginObserver.Method method,
        long start,
        IntSupplier devices) {
      result.whenComplete(
          (value, error) -> {
            Status.Code code = Status.Code.OK;
            if (error != null) {
              StatusRuntimeException status = Statuses.of(error);
              out.onError(status);
              code = status.getStatus().getCode();
            } else {
              out.onNext(reply.apply(value));
              out.onCompleted();
            }
            observed(method, code, start, devices.getAsInt());
          });
    }
  }
}
