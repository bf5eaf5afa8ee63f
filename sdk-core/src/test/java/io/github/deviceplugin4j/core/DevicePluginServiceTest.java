package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DevicePlugin service over a real socket, called by a plain gRPC client so that requests the
 * kubelet never sends (empty, repeated, several containers) can be tested too.
 */
class DevicePluginServiceTest {

  private static final String RESOURCE = "example.com/dev";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final List<DevicePluginException> errors = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    TestSupport.awaitNoCoreThreads();
  }

  private DevicePluginHost start(
      DeviceBackend backend, Function<DevicePluginHost.Builder, DevicePluginHost.Builder> more) {
    DevicePluginHost host =
        more.apply(
                DevicePluginHost.builder()
                    .pluginDir(dir)
                    .registrationMode(RegistrationMode.LEGACY)
                    .backend(backend)
                    .listener(
                        new PluginListener() {
                          @Override
                          public void onError(String resourceName, DevicePluginException error) {
                            errors.add(error);
                          }
                        }))
            .start();
    closeables.add(host);
    return host;
  }

  private PluginClient client(DevicePluginHost host) {
    PluginClient c = PluginClient.connect(host.status(RESOURCE).socket());
    closeables.add(c);
    return c;
  }

  private StreamCollector watch(PluginClient client) {
    StreamCollector s = new StreamCollector();
    client.async().listAndWatch(Empty.getDefaultInstance(), s);
    return s;
  }

  /** d0..d3, d3 unhealthy, d0/d1 carry device nodes and an env variable. */
  private static List<Device> devices() {
    return List.of(
        Device.builder("d0")
            .numaNode(0)
            .deviceNode(DeviceNode.rw("/dev/fpga0"))
            .env("FPGA_PORTS", "0")
            .cdiDevice("example.com/fpga=d0")
            .build(),
        Device.builder("d1")
            .numaNode(1)
            .deviceNode(DeviceNode.rw("/dev/fpga1"))
            .env("FPGA_PORTS", "1")
            .mount(Mount.readOnly("/opt/fpga"))
            .build(),
        Device.healthy("d2"),
        Device.builder("d3").health(Health.UNHEALTHY).build());
  }

  // ------------------------------------------------------------------------------ ListAndWatch

  @Test
  void listAndWatch_sendsTheListAtOnceAndThenOnlyEffectiveChanges() throws Exception {
    TestBackend backend = new TestBackend(RESOURCE, devices());
    DevicePluginHost host = start(backend, b -> b);
    StreamCollector stream = watch(client(host));

    assertThat(stream.next(WAIT))
        .containsExactly("d0:Healthy:numa0", "d1:Healthy:numa1", "d2:Healthy", "d3:Unhealthy");

    backend.publish(devices()); // identical: not sent
    List<Device> reversed = new ArrayList<>(devices());
    java.util.Collections.reverse(reversed);
    backend.publish(reversed); // same set in another order: not sent
    List<Device> d3Healthy = new ArrayList<>(devices());
    d3Healthy.set(3, Device.healthy("d3"));
    backend.publish(d3Healthy);

    assertThat(stream.next(WAIT)).contains("d3:Healthy").hasSize(4);
    assertThat(stream.messages).isEmpty();
    await().atMost(WAIT).until(() -> host.status(RESOURCE).healthyDevices() == 4);
  }

  @Test
  void listAndWatch_coalescesBursts() throws Exception {
    TestBackend backend = TestBackend.of(RESOURCE, "d0");
    DevicePluginHost host = start(backend, b -> b);
    StreamCollector stream = watch(client(host));
    assertThat(stream.next(WAIT)).containsExactly("d0:Healthy");

    for (int i = 0; i < 1000; i++) {
      backend.publish(List.of(Device.healthy("burst" + i)));
    }

    List<List<String>> received = new ArrayList<>();
    do {
      received.add(stream.next(WAIT));
    } while (!received.get(received.size() - 1).equals(List.of("burst999:Healthy")));
    assertThat(received.size()).as("messages for 1000 snapshots").isLessThan(20);
  }

  /**
   * 30 streams over three connections: one connection carries at most 16 calls at once
   * (TransportLimits), a kubelet one stream.
   */
  @Test
  void listAndWatch_servesManyConcurrentStreamsAndCleansUpCancelledOnes() throws Exception {
    TestBackend backend = TestBackend.of(RESOURCE, "d0");
    DevicePluginHost host = start(backend, b -> b);
    List<PluginClient> clients = List.of(client(host), client(host), client(host));
    List<StreamCollector> streams =
        IntStream.range(0, 30).mapToObj(i -> watch(clients.get(i % 3))).toList();
    for (StreamCollector s : streams) {
      assertThat(s.next(WAIT)).containsExactly("d0:Healthy");
    }
    assertThat(host.openStreams(RESOURCE)).isEqualTo(30);

    backend.publish(List.of(Device.healthy("d0"), Device.healthy("d1")));
    for (StreamCollector s : streams) {
      assertThat(s.next(WAIT)).containsExactly("d0:Healthy", "d1:Healthy");
    }

    streams.subList(0, 20).forEach(StreamCollector::cancel);
    await().atMost(WAIT).until(() -> host.openStreams(RESOURCE) == 10);

    backend.publish(List.of(Device.healthy("d1")));
    for (StreamCollector s : streams.subList(20, 30)) {
      assertThat(s.next(WAIT)).containsExactly("d1:Healthy");
    }
  }

  @Test
  void listAndWatch_devicesGoUnhealthyAndComeBack() throws Exception {
    TestBackend backend = TestBackend.of(RESOURCE, "d0", "d1");
    DevicePluginHost host = start(backend, b -> b);
    StreamCollector stream = watch(client(host));
    assertThat(stream.next(WAIT)).containsExactly("d0:Healthy", "d1:Healthy");
    for (int i = 0; i < 3; i++) {
      backend.publish(
          List.of(Device.healthy("d0"), Device.healthy("d1").withHealth(Health.UNHEALTHY)));
      assertThat(stream.next(WAIT)).containsExactly("d0:Healthy", "d1:Unhealthy");
      backend.publish(List.of(Device.healthy("d0"), Device.healthy("d1")));
      assertThat(stream.next(WAIT)).containsExactly("d0:Healthy", "d1:Healthy");
    }
  }

  @Test
  void listAndWatch_dropsBadDevicesKeepsTheOthersAndReportsWhy() throws Exception {
    TestBackend backend = TestBackend.of(RESOURCE, "d0");
    DevicePluginHost host = start(backend, b -> b);
    StreamCollector stream = watch(client(host));
    stream.next(WAIT);

    backend.publish(
        List.of(
            Device.healthy("good"),
            Device.healthy("x".repeat(64)),
            Device.builder("badpath").deviceNode(DeviceNode.rw("dev/relative")).build(),
            Device.builder("badenv").env("1X", "v").build(),
            Device.builder("badcdi").cdiDevice("not-qualified").build(),
            Device.healthy("good")));

    assertThat(stream.next(WAIT)).containsExactly("good:Healthy");
    await()
        .atMost(WAIT)
        .until(() -> errors.stream().anyMatch(e -> e instanceof InvalidBackendDataException));
    InvalidBackendDataException error =
        (InvalidBackendDataException)
            errors.stream()
                .filter(e -> e instanceof InvalidBackendDataException)
                .findFirst()
                .orElseThrow();
    assertThat(error.operation()).isEqualTo("devices");
    assertThat(error.problems())
        .hasSize(5)
        .anyMatch(p -> p.contains("64 characters"))
        .anyMatch(p -> p.contains("\"badpath\" dropped") && p.contains("not absolute"))
        .anyMatch(p -> p.contains("\"badenv\" dropped") && p.contains("\"1X\""))
        .anyMatch(p -> p.contains("\"badcdi\" dropped") && p.contains("not-qualified"))
        .anyMatch(p -> p.contains("\"good\" is repeated"));
    assertThat(host.status(RESOURCE).lastError()).isPresent();
  }

  @Test
  void listAndWatch_refusesAListOverTheKubeletsFourMebibyteLimitAndKeepsTheLastGoodOne()
      throws Exception {
    TestBackend backend = TestBackend.of(RESOURCE, "d0");
    DevicePluginHost host = start(backend, b -> b);
    StreamCollector stream = watch(client(host));
    stream.next(WAIT);

    String prefix = "x".repeat(55);
    List<Device> huge =
        IntStream.range(0, 70_000).mapToObj(i -> Device.healthy(prefix + i)).toList();
    backend.publish(huge);

    await()
        .atMost(WAIT)
        .until(() -> errors.stream().anyMatch(e -> e.getMessage().contains("4194304")));
    InvalidBackendDataException error =
        (InvalidBackendDataException)
            errors.stream()
                .filter(e -> e.getMessage().contains("4194304"))
                .findFirst()
                .orElseThrow();
    assertThat(error.problems().get(0))
        .contains("70000 devices encodes to")
        .contains("over the kubelet's limit of 4194304 bytes")
        .contains("the last good list of 1 devices stays");
    assertThat(host.status(RESOURCE).totalDevices()).isEqualTo(1);

    // the stream was not sent the huge list, and a new stream gets the last good one
    backend.publish(List.of(Device.healthy("d0"), Device.healthy("d1")));
    assertThat(stream.next(WAIT)).containsExactly("d0:Healthy", "d1:Healthy");
  }

  @Test
  void polledBackendsAndRescanRequestsReachTheStream() throws Exception {
    TestBackend backend = TestBackend.of(RESOURCE, "d0");
    backend.pollInterval = Duration.ofMillis(50);
    DevicePluginHost host = start(backend, b -> b);
    StreamCollector stream = watch(client(host));
    stream.next(WAIT);

    backend.set(List.of(Device.healthy("polled")));
    assertThat(stream.next(WAIT)).containsExactly("polled:Healthy");

    backend.pollInterval = Duration.ZERO;
    backend.set(List.of(Device.healthy("rescanned")));
    backend.sink.rescan();
    assertThat(stream.next(WAIT)).containsExactly("rescanned:Healthy");
  }

  @Test
  void aFailingDeviceScanKeepsTheLastGoodList() throws Exception {
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    TestBackend backend =
        new TestBackend(RESOURCE, List.of(Device.healthy("d0"))) {
          @Override
          public List<Device> devices() {
            RuntimeException e = failure.get();
            if (e != null) {
              throw e;
            }
            return super.devices();
          }
        };
    DevicePluginHost host = start(backend, b -> b);
    failure.set(new IllegalStateException("sysfs gone"));
    backend.sink.rescan();
    await()
        .atMost(WAIT)
        .until(() -> errors.stream().anyMatch(e -> e.getMessage().contains("sysfs gone")));
    assertThat(host.status(RESOURCE).totalDevices()).isEqualTo(1);
    assertThat(errors)
        .anyMatch(e -> e instanceof BackendException b && b.operation().equals("devices"));
  }

  // -------------------------------------------------------------------------- request checks

  private static AllocateRequest allocate(List<String>... containers) {
    AllocateRequest.Builder b = AllocateRequest.newBuilder();
    for (List<String> ids : containers) {
      b.addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(ids));
    }
    return b.build();
  }

  private static io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest preferred(
      List<String> available, List<String> must, int size) {
    return io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest.newBuilder()
        .addContainerRequests(
            ContainerPreferredAllocationRequest.newBuilder()
                .addAllAvailableDeviceIDs(available)
                .addAllMustIncludeDeviceIDs(must)
                .setAllocationSize(size))
        .build();
  }

  @SuppressWarnings("unchecked")
  static Stream<Arguments> invalidRequests() {
    return Stream.of(
        Arguments.of(
            "Allocate without container requests",
            (Call) c -> c.allocate(AllocateRequest.getDefaultInstance()),
            Status.Code.INVALID_ARGUMENT,
            "Allocate for example.com/dev has no container requests"),
        Arguments.of(
            "Allocate with an empty container request",
            (Call) c -> c.allocate(allocate(List.of("d0"), List.of())),
            Status.Code.INVALID_ARGUMENT,
            "Allocate container request 1 for example.com/dev names no devices"),
        Arguments.of(
            "Allocate with unknown IDs",
            (Call) c -> c.allocate(allocate(List.of("d0", "zz", "yy"))),
            Status.Code.INVALID_ARGUMENT,
            "names unknown device IDs [\"zz\", \"yy\"]"),
        Arguments.of(
            "Allocate with a repeated ID",
            (Call) c -> c.allocate(allocate(List.of("d0", "d1", "d0"))),
            Status.Code.INVALID_ARGUMENT,
            "repeats device IDs [\"d0\"]"),
        Arguments.of(
            "Allocate with an unhealthy device",
            (Call) c -> c.allocate(allocate(List.of("d0", "d3"))),
            Status.Code.FAILED_PRECONDITION,
            "names unhealthy devices [\"d3\"]"),
        Arguments.of(
            "PreStartContainer without devices",
            (Call) c -> c.preStartContainer(PreStartContainerRequest.getDefaultInstance()),
            Status.Code.INVALID_ARGUMENT,
            "PreStartContainer for example.com/dev names no devices"),
        Arguments.of(
            "PreStartContainer with an empty ID",
            (Call)
                c ->
                    c.preStartContainer(
                        PreStartContainerRequest.newBuilder()
                            .addDevicesIds("d0")
                            .addDevicesIds("")
                            .build()),
            Status.Code.INVALID_ARGUMENT,
            "PreStartContainer for example.com/dev names malformed device IDs: device ID is"
                + " empty"),
        Arguments.of(
            "PreStartContainer with an ID over 63 characters",
            (Call)
                c ->
                    c.preStartContainer(
                        PreStartContainerRequest.newBuilder()
                            .addDevicesIds("x".repeat(64))
                            .build()),
            Status.Code.INVALID_ARGUMENT,
            "is 64 characters; the kubelet allows at most 63"),
        Arguments.of(
            "PreStartContainer with a repeated ID",
            (Call)
                c ->
                    c.preStartContainer(
                        PreStartContainerRequest.newBuilder()
                            .addDevicesIds("d0")
                            .addDevicesIds("d0")
                            .build()),
            Status.Code.INVALID_ARGUMENT,
            "repeats device IDs [\"d0\"]"));
  }

  /** A call on the plugin. */
  interface Call {
    Object call(
        io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc.DevicePluginBlockingStub stub);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidRequests")
  void invalidRequestsFailBeforeTheBackendIsCalled(
      String name, Call call, Status.Code code, String fragment) throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    DevicePluginHost host = start(backend, b -> b);
    PluginClient client = client(host);

    assertThatThrownBy(() -> call.call(client.blocking()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(code);
              assertThat(e.getStatus().getDescription()).contains(fragment);
            });
    assertThat(backend.calls).isEmpty();
  }

  /** A backend with every capability that records its calls. */
  static class RecordingBackend extends TestBackend
      implements Allocator, PreferredAllocator, PreStartHook {
    final List<String> calls = new CopyOnWriteArrayList<>();
    volatile Allocator allocator = AllocationRequest::defaultAllocation;
    volatile PreferredAllocator preferred = AllocationPolicies.packed();
    volatile PreStartHook preStart = devices -> {};
    volatile PreStartRequest lastPreStart;

    RecordingBackend(List<Device> devices) {
      super(RESOURCE, devices);
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) throws Exception {
      calls.add("allocate " + request.deviceIds());
      return allocator.allocate(request);
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception {
      calls.add("preferred " + request.availableIds());
      return preferred.preferredAllocation(request);
    }

    @Override
    public void preStart(PreStartRequest request) throws Exception {
      lastPreStart = request;
      PreStartHook.super.preStart(request);
    }

    @Override
    public void preStart(List<Device> devices) throws Exception {
      calls.add("preStart " + devices.stream().map(Device::id).toList());
      preStart.preStart(devices);
    }
  }

  // ------------------------------------------------------------------------- backend answers

  @Test
  void allocate_answersEveryContainerRequestWithTheDevicesOwnAllocations() throws Exception {
    DevicePluginHost host = start(new TestBackend(RESOURCE, devices()), b -> b);
    AllocateResponse r =
        client(host).blocking().allocate(allocate(List.of("d0", "d1"), List.of("d2")));
    assertThat(r.getContainerResponsesCount()).isEqualTo(2);
    ContainerAllocateResponse first = r.getContainerResponses(0);
    assertThat(first.getEnvsMap()).containsEntry("FPGA_PORTS", "0,1");
    assertThat(first.getDevicesList())
        .extracting(d -> d.getHostPath() + " " + d.getContainerPath() + " " + d.getPermissions())
        .containsExactly("/dev/fpga0 /dev/fpga0 rw", "/dev/fpga1 /dev/fpga1 rw");
    assertThat(first.getMountsList())
        .extracting(m -> m.getHostPath() + " " + m.getReadOnly())
        .containsExactly("/opt/fpga true");
    assertThat(first.getCdiDevicesList())
        .extracting(c -> c.getName())
        .containsExactly("example.com/fpga=d0");
    assertThat(r.getContainerResponses(1))
        .isEqualTo(ContainerAllocateResponse.getDefaultInstance());
  }

  @Test
  void options_areDerivedFromTheBackendsCapabilities() throws Exception {
    DevicePluginHost plain = start(new TestBackend(RESOURCE, devices()), b -> b);
    DevicePluginOptions options =
        client(plain).blocking().getDevicePluginOptions(Empty.getDefaultInstance());
    assertThat(options.getPreStartRequired()).isFalse();
    assertThat(options.getGetPreferredAllocationAvailable()).isFalse();
    plain.close();

    DevicePluginHost full = start(new RecordingBackend(devices()), b -> b);
    options = client(full).blocking().getDevicePluginOptions(Empty.getDefaultInstance());
    assertThat(options.getPreStartRequired()).isTrue();
    assertThat(options.getGetPreferredAllocationAvailable()).isTrue();
  }

  @Test
  void allocate_aBackendAnswerWithABadPathIsAnInternalErrorNamingIt() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    backend.allocator =
        r ->
            r.defaultAllocation().toBuilder().deviceNode(DeviceNode.rw("../../etc/passwd")).build();
    DevicePluginHost host = start(backend, b -> b);
    assertThatThrownBy(() -> client(host).blocking().allocate(allocate(List.of("d0"))))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
              assertThat(e.getStatus().getDescription())
                  .contains("backend returned invalid data in Allocate")
                  .contains("container request 0")
                  .contains("\"../../etc/passwd\" is not absolute");
            });
  }

  @Test
  void allocate_aBackendExceptionFailsThatCallOnly() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    backend.allocator =
        r -> {
          if (r.deviceIds().contains("d1")) {
            throw new IOException("firmware not loaded");
          }
          return r.defaultAllocation();
        };
    DevicePluginHost host = start(backend, b -> b);
    PluginClient client = client(host);
    assertThatThrownBy(() -> client.blocking().allocate(allocate(List.of("d1"))))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
              assertThat(e.getStatus().getDescription())
                  .contains("the backend failed in Allocate for example.com/dev")
                  .contains("IOException: firmware not loaded");
            });
    assertThat(client.blocking().allocate(allocate(List.of("d0"))).getContainerResponsesCount())
        .isEqualTo(1);
    assertThat(errors)
        .anyMatch(e -> e instanceof BackendException b && b.operation().equals("Allocate"));
  }

  @Test
  void allocate_aBackendMayChooseTheStatusCodeByThrowingATypedException() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    backend.allocator =
        r -> {
          throw new DeviceUnavailableException("d0 is being reset", List.of("d0"));
        };
    DevicePluginHost host = start(backend, b -> b);
    assertThatThrownBy(() -> client(host).blocking().allocate(allocate(List.of("d0"))))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
              assertThat(e.getStatus().getDescription()).isEqualTo("d0 is being reset");
            });
  }

  @Test
  @SuppressWarnings("deprecation")
  void allocationTimeout_stillSetsTheAllocateDeadline() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    CountDownLatch never = new CountDownLatch(1);
    closeables.add(never::countDown);
    backend.allocator =
        r -> {
          never.await();
          return r.defaultAllocation();
        };
    DevicePluginHost host = start(backend, b -> b.allocationTimeout(Duration.ofMillis(150)));
    assertThatThrownBy(() -> client(host).blocking().allocate(allocate(List.of("d0"))))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getDescription())
                    .contains("within 150 ms (allocateDeadline)"));
  }

  @Test
  void preStart_aHookPastItsDeadlineIsDeadlineExceededNamingTheOption() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    CountDownLatch never = new CountDownLatch(1);
    closeables.add(never::countDown);
    backend.preStart = devices -> never.await();
    DevicePluginHost host =
        start(
            backend,
            b ->
                b.allocateDeadline(Duration.ofMillis(50)).preStartDeadline(Duration.ofMillis(300)));
    assertThatThrownBy(
            () ->
                client(host)
                    .blocking()
                    .preStartContainer(
                        PreStartContainerRequest.newBuilder().addDevicesIds("d0").build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
              assertThat(e.getStatus().getDescription())
                  .contains(
                      "did not answer PreStartContainer for example.com/dev within 300 ms"
                          + " (preStartDeadline)");
            });
  }

  @Test
  void deadlines_mustBePositive() {
    DevicePluginHost.Builder b = DevicePluginHost.builder();
    assertThatThrownBy(() -> b.allocateDeadline(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("allocateDeadline must be positive, was PT0S");
    assertThatThrownBy(() -> b.preferredAllocationDeadline(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("preferredAllocationDeadline must be positive");
    assertThatThrownBy(() -> b.preStartDeadline(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("preStartDeadline must be positive");
  }

  @Test
  void allocate_aBackendThatHangsTimesOutWithDeadlineExceeded() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    CountDownLatch never = new CountDownLatch(1);
    backend.allocator =
        r -> {
          never.await();
          return r.defaultAllocation();
        };
    DevicePluginHost host = start(backend, b -> b.allocateDeadline(Duration.ofMillis(200)));
    long start = System.nanoTime();
    assertThatThrownBy(() -> client(host).blocking().allocate(allocate(List.of("d0"))))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
              assertThat(e.getStatus().getDescription())
                  .contains("did not answer Allocate for example.com/dev within 200 ms");
            });
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void preferred_aValidAnswerIsSentAsIs() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    PluginClient client = client(start(backend, b -> b));
    PreferredAllocationResponse ok =
        client
            .blocking()
            .getPreferredAllocation(preferred(List.of("d2", "d1", "d0"), List.of("d1"), 2));
    assertThat(ok.getContainerResponses(0).getDeviceIDsList()).containsExactly("d1", "d0");
    assertThat(errors).isEmpty();
  }

  static Stream<Arguments> brokenPolicies() {
    return Stream.of(
        Arguments.of("the wrong size", (PreferredAllocator) r -> List.of("d0")),
        Arguments.of("a device outside the set", (PreferredAllocator) r -> List.of("d0", "d9")),
        Arguments.of("a repeated device", (PreferredAllocator) r -> List.of("d1", "d1")),
        Arguments.of("null", (PreferredAllocator) r -> null),
        Arguments.of(
            "an exception",
            (PreferredAllocator)
                r -> {
                  throw new IllegalStateException("policy broke");
                }));
  }

  @ParameterizedTest(name = "a policy answering {0}")
  @MethodSource("brokenPolicies")
  void preferred_aBrokenPolicyIsReplacedByAValidFallbackNeverAnError(
      String name, PreferredAllocator policy) throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    backend.preferred = policy;
    PluginClient client = client(start(backend, b -> b));
    // The kubelet's order is Go map order; the fallback takes must-include first, then the
    // plugin's own order.
    PreferredAllocationResponse r =
        client
            .blocking()
            .getPreferredAllocation(preferred(List.of("d2", "d1", "d0"), List.of("d2"), 2));
    assertThat(r.getContainerResponses(0).getDeviceIDsList()).containsExactly("d2", "d0");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(errors)
                    .singleElement()
                    .satisfies(
                        e ->
                            assertThat(e.getMessage())
                                .contains("GetPreferredAllocation")
                                .contains("answered with a fallback choice")));
  }

  @Test
  void preferred_aPolicyPastItsDeadlineIsReplacedByAFallback() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    CountDownLatch release = new CountDownLatch(1);
    closeables.add(release::countDown);
    backend.preferred =
        r -> {
          release.await();
          return r.availableIds().subList(0, r.size());
        };
    PluginClient client =
        client(start(backend, b -> b.preferredAllocationDeadline(Duration.ofMillis(100))));
    PreferredAllocationResponse r =
        client.blocking().getPreferredAllocation(preferred(List.of("d1", "d0"), List.of(), 1));
    assertThat(r.getContainerResponses(0).getDeviceIDsList()).containsExactly("d0");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(errors)
                    .singleElement()
                    .satisfies(
                        e ->
                            assertThat(e.getMessage())
                                .contains("within 100 ms (preferredAllocationDeadline)")
                                .contains("answered with a fallback choice")));
  }

  static Stream<Arguments> repairableQueries() {
    return Stream.of(
        // name, available, must, size, answer, what the policy was asked (null: not asked)
        Arguments.of(
            "an unknown available ID is ignored",
            List.of("q", "d1", "d0"),
            List.of(),
            1,
            List.of("d0"),
            "preferred [d1, d0]"),
        Arguments.of(
            "an unhealthy available ID is ignored",
            List.of("d3", "d0"),
            List.of(),
            1,
            List.of("d0"),
            "preferred [d0]"),
        Arguments.of(
            "an unhealthy must-include ID is kept",
            List.of("d3", "d0"),
            List.of("d3"),
            2,
            List.of("d3", "d0"),
            "preferred [d3, d0]"),
        Arguments.of(
            "a must-include ID outside the available ones is kept",
            List.of("d0"),
            List.of("d2"),
            2,
            List.of("d2", "d0"),
            "preferred [d0, d2]"),
        Arguments.of(
            "an unknown must-include ID is kept, the policy not asked",
            List.of("d1", "d0"),
            List.of("zz"),
            2,
            List.of("zz", "d0"),
            null),
        Arguments.of(
            "size over the known healthy ones: all of them",
            List.of("d3", "d1", "q"),
            List.of(),
            3,
            List.of("d1"),
            null),
        Arguments.of(
            "more must-include than size: all must-include",
            List.of("d0", "d1"),
            List.of("d1", "d0"),
            1,
            List.of("d1", "d0"),
            null),
        Arguments.of(
            "size 0: an empty answer", List.of("d0", "d1"), List.of(), 0, List.of(), null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("repairableQueries")
  void preferred_repairsWhatItCanInsteadOfFailingTheAdmission(
      String name,
      List<String> available,
      List<String> must,
      int size,
      List<String> answer,
      String asked)
      throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    PluginClient client = client(start(backend, b -> b));
    PreferredAllocationResponse r =
        client.blocking().getPreferredAllocation(preferred(available, must, size));
    assertThat(r.getContainerResponses(0).getDeviceIDsList()).isEqualTo(answer);
    if (asked == null) {
      assertThat(backend.calls).isEmpty();
    } else {
      assertThat(backend.calls).containsExactly(asked);
    }
  }

  @Test
  void preStart_aDeviceThatTurnedUnhealthyReachesTheHookAndSucceeds() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    PluginClient client = client(start(backend, b -> b));
    StreamCollector stream = watch(client);
    stream.next(WAIT);
    client.blocking().allocate(allocate(List.of("d1")));

    List<Device> flipped = new ArrayList<>(devices());
    flipped.set(1, flipped.get(1).withHealth(Health.UNHEALTHY));
    backend.publish(flipped);
    assertThat(stream.next(WAIT)).contains("d1:Unhealthy:numa1");

    client
        .blocking()
        .preStartContainer(PreStartContainerRequest.newBuilder().addDevicesIds("d1").build());
    assertThat(backend.calls).containsExactly("allocate [d1]", "preStart [d1]");
    assertThat(backend.lastPreStart.unhealthy()).extracting(Device::id).containsExactly("d1");
    assertThat(backend.lastPreStart.unknownIds()).isEmpty();
  }

  @Test
  void preStart_anUnknownIdReachesTheHookWhichAloneMayRefuse() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    PluginClient client = client(start(backend, b -> b));
    client
        .blocking()
        .preStartContainer(
            PreStartContainerRequest.newBuilder()
                .addDevicesIds("gone")
                .addDevicesIds("d0")
                .build());
    assertThat(backend.lastPreStart.unknownIds()).containsExactly("gone");
    assertThat(backend.lastPreStart.devices()).extracting(Device::id).containsExactly("d0");
    assertThat(backend.calls)
        .as("the List form sees the known devices")
        .containsExactly("preStart [d0]");
  }

  @Test
  void preStart_withoutAHookEveryWellFormedIdSucceeds() throws Exception {
    PluginClient client = client(start(new TestBackend(RESOURCE, devices()), b -> b));
    client
        .blocking()
        .preStartContainer(
            PreStartContainerRequest.newBuilder()
                .addDevicesIds("d3")
                .addDevicesIds("gone")
                .build());
    assertThat(errors).isEmpty();
  }

  @Test
  void preStart_runsTheHookAndReportsItsFailure() throws Exception {
    RecordingBackend backend = new RecordingBackend(devices());
    DevicePluginHost host = start(backend, b -> b);
    PluginClient client = client(host);
    client
        .blocking()
        .preStartContainer(PreStartContainerRequest.newBuilder().addDevicesIds("d1").build());
    assertThat(backend.calls).containsExactly("preStart [d1]");

    backend.preStart =
        devices -> {
          throw new IllegalStateException("reset failed");
        };
    assertThatThrownBy(
            () ->
                client
                    .blocking()
                    .preStartContainer(
                        PreStartContainerRequest.newBuilder().addDevicesIds("d0").build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
              assertThat(e.getStatus().getDescription())
                  .contains("IllegalStateException: reset failed");
            });
  }

  @Test
  void closeEndsOpenStreams() throws Exception {
    DevicePluginHost host = start(TestBackend.of(RESOURCE, "d0"), b -> b);
    StreamCollector stream = watch(client(host));
    stream.next(WAIT);
    host.close();
    await().atMost(WAIT).until(() -> stream.completed || stream.error.get() != null);
  }
}
