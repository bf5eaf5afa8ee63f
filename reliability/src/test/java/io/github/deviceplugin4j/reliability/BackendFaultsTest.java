package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc.DevicePluginBlockingStub;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.DeviceUnavailableException;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend fails: it throws on discovery, allocation, preferred allocation and pre-start, hangs
 * in allocation, and returns malformed data. The failing call fails with a clear status; every
 * other call, the device stream and the registration keep working.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BackendFaultsTest {

  static final String RESOURCE = "example.com/faulty";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration STEP = Duration.ofSeconds(60);
  static final Duration ALLOCATION_TIMEOUT = Duration.ofMillis(300);

  @TempDir Path tmp;

  FakeKubelet kubelet;
  ScriptedBackend.Capable backend;
  RecordingListener listener;
  DevicePluginHost host;
  RawClient client;

  @BeforeEach
  void start() {
    kubelet = FakeKubelet.start(tmp.resolve("dp"));
    backend = new ScriptedBackend.Capable(RESOURCE, devices(Health.HEALTHY));
    listener = new RecordingListener();
    host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .allocateDeadline(ALLOCATION_TIMEOUT)
            .backend(backend)
            .listener(listener)
            .start();
    kubelet.awaitDevices(RESOURCE, l -> l.size() == 4, STEP);
    client = RawClient.connect(host.status(RESOURCE).socket());
  }

  @AfterEach
  void stop() {
    client.close();
    host.close();
    kubelet.close();
  }

  @Test
  void discoveryThrows_lastGoodListStays_andRecovers() {
    backend.failDiscovery(new java.io.IOException("sysfs read failed"));
    backend.rescan();
    await()
        .atMost(STEP)
        .until(() -> listener.hasError(BackendException.class, "IOException: sysfs read failed"));
    assertThat(kubelet.devices(RESOURCE)).hasSize(4).allMatch(d -> d.healthy());
    assertStillServing("d1");
    backend.failDiscovery(null);
    List<Device> next = devices(Health.UNHEALTHY);
    backend.publish(next);
    kubelet.awaitDevices(RESOURCE, l -> l.stream().filter(d -> !d.healthy()).count() == 1, STEP);
    report("discovery-throws", "BackendException reported, last good list kept, recovered");
  }

  @Test
  void allocatorThrows_thatCallFailsInternal_othersWork() {
    backend.onAllocate =
        r -> {
          if (r.deviceIds().contains("d0")) {
            throw new IllegalStateException("reset of d0 failed");
          }
          return r.defaultAllocation();
        };
    StatusRuntimeException e = allocateFails("d0");
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.getStatus().getDescription())
        .contains("the backend failed in Allocate for " + RESOURCE)
        .contains("IllegalStateException: reset of d0 failed");
    assertStillServing("d1");
    report("allocate-throws", describe(e));
  }

  @Test
  void allocatorThrowsTypedException_vendorChoosesTheCode() {
    backend.onAllocate =
        r -> {
          throw new DeviceUnavailableException("d0 is being reset", List.of("d0"));
        };
    StatusRuntimeException e = allocateFails("d0");
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(e.getStatus().getDescription()).isEqualTo("d0 is being reset");
    backend.onAllocate = r -> r.defaultAllocation();
    assertStillServing("d0");
    report("allocate-throws-typed", describe(e));
  }

  @Test
  void preStartThrows_thatCallFailsInternal_othersWork() {
    backend.onPreStart =
        devices -> {
          throw new java.io.IOException("firmware load failed");
        };
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                client
                    .blocking()
                    .preStartContainer(
                        PreStartContainerRequest.newBuilder().addDevicesIds("d2").build()));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.getStatus().getDescription())
        .contains("PreStartContainer")
        .contains("IOException: firmware load failed");
    assertThat(backend.preStarts.get()).as("the hook was called").isPositive();
    backend.onPreStart = devices -> {};
    assertStillServing("d2");
    report("prestart-throws", describe(e));
  }

  @Test
  void preferredThrows_answeredWithAFallbackNeverAnError_othersWork() {
    backend.onPreferred =
        r -> {
          throw new ArithmeticException("topology math");
        };
    // An error status would fail the pod's admission; the kubelet tolerates any answer.
    List<String> answer =
        client
            .blocking()
            .getPreferredAllocation(preferred(List.of("d1", "d0"), 1))
            .getContainerResponses(0)
            .getDeviceIDsList();
    assertThat(answer).containsExactly("d0");
    assertStillServing("d3");
    report("preferred-throws", "OK, fallback answer " + answer);
  }

  @Test
  void allocatorHangs_deadlineExceededAfterAllocationTimeout_othersWork() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    CountDownLatch never = new CountDownLatch(1);
    backend.onAllocate =
        r -> {
          if (r.deviceIds().contains("d0")) {
            entered.countDown();
            try {
              never.await(); // hangs until the core gives up and interrupts it
            } catch (InterruptedException e) {
              interrupted.set(true);
              throw e;
            }
          }
          return r.defaultAllocation();
        };
    CompletableFuture<StatusRuntimeException> hung =
        CompletableFuture.supplyAsync(() -> allocateFails("d0"));
    assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
    long t0 = System.nanoTime();
    // While d0's allocation hangs, everything else works.
    assertStillServing("d1");
    StatusRuntimeException e = hung.get(10, TimeUnit.SECONDS);
    double ms = (System.nanoTime() - t0) / 1e6;
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(e.getStatus().getDescription())
        .contains("did not answer Allocate for " + RESOURCE + " within 300 ms (allocateDeadline)");
    await().atMost(STEP).untilTrue(interrupted);
    // Backend calls run on pooled worker threads: the interrupt meant for the hung call must not
    // reach the calls that thread serves next.
    AtomicBoolean leaked = new AtomicBoolean();
    backend.onAllocate =
        r -> {
          if (Thread.currentThread().isInterrupted()) {
            leaked.set(true);
          }
          return r.defaultAllocation();
        };
    for (int i = 0; i < 50; i++) {
      assertThat(client.blocking().allocate(allocate("d1")).getContainerResponsesCount())
          .isEqualTo(1);
    }
    assertThat(leaked).as("a later backend call started with its thread interrupted").isFalse();
    report(
        "allocate-hangs",
        String.format(
            "%s; hung call interrupted=%s; other calls served meanwhile (%.0f ms)",
            describe(e), interrupted.get(), ms));
  }

  @Test
  void allocatorReturnsMalformedData_internalNamingTheProblem() {
    List<String> seen = new ArrayList<>();
    backend.onAllocate =
        r ->
            ContainerAllocation.builder()
                .env("1BAD", "x")
                .deviceNode(new DeviceNode("dev/x", "/dev/../etc/shadow", "rwx"))
                .cdiDevice("not-a-cdi-name")
                .build();
    StatusRuntimeException e = allocateFails("d0");
    seen.add(describe(e));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.getStatus().getDescription())
        .contains("environment variable name \"1BAD\" is invalid")
        .contains("\"dev/x\" is not absolute")
        .contains("contains a '..' segment")
        .contains("contain 'x'");
    backend.onAllocate = r -> null;
    StatusRuntimeException nul = allocateFails("d0");
    assertThat(nul.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(nul.getStatus().getDescription()).contains("returned null");
    backend.onPreferred = r -> List.of("d0", "d0", "zz");
    // A broken preferred answer is replaced by a valid fallback: an error would fail the pod.
    List<String> pref =
        client
            .blocking()
            .getPreferredAllocation(preferred(List.of("d1", "d0"), 2))
            .getContainerResponses(0)
            .getDeviceIDsList();
    assertThat(pref).containsExactly("d0", "d1");
    backend.onAllocate = r -> r.defaultAllocation();
    assertStillServing("d0");
    report(
        "malformed-answers",
        "allocate, null -> INTERNAL naming each problem; preferred -> fallback " + pref);
  }

  /** Other calls, the stream and the registration still work. */
  private void assertStillServing(String id) {
    DevicePluginBlockingStub stub = client.blocking();
    assertThat(stub.getDevicePluginOptions(Empty.getDefaultInstance()).getPreStartRequired())
        .isTrue();
    AllocateResponse r = stub.allocate(allocate(id));
    assertThat(r.getContainerResponses(0).getDevicesList())
        .extracting(d -> d.getHostPath())
        .containsExactly("/dev/x" + id.substring(1));
    assertThat(kubelet.allocate(RESOURCE, id).deviceIds()).containsExactly(id);
    assertThat(host.isReady()).isTrue();
    assertThat(kubelet.registrations()).hasSize(1);
  }

  private StatusRuntimeException allocateFails(String id) {
    return catchThrowableOfType(
        StatusRuntimeException.class, () -> client.blocking().allocate(allocate(id)));
  }

  static AllocateRequest allocate(String... ids) {
    return AllocateRequest.newBuilder()
        .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(List.of(ids)))
        .build();
  }

  static PreferredAllocationRequest preferred(List<String> available, int size) {
    return PreferredAllocationRequest.newBuilder()
        .addContainerRequests(
            ContainerPreferredAllocationRequest.newBuilder()
                .addAllAvailableDeviceIDs(available)
                .setAllocationSize(size))
        .build();
  }

  static List<Device> devices(Health health) {
    List<Device> list = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      list.add(
          Device.builder("d" + i)
              .health(i == 3 ? health : Health.HEALTHY)
              .deviceNode(DeviceNode.rw("/dev/x" + i))
              .build());
    }
    return list;
  }

  private static String describe(StatusRuntimeException e) {
    return e.getStatus().getCode() + " \"" + e.getStatus().getDescription() + "\"";
  }

  private static void report(String fault, String outcome) {
    Figures.print("backend-fault " + fault + " -> " + outcome + "; other calls OK");
  }
}
