package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationResponse;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DeviceSpec;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.github.deviceplugin4j.testkit.AllocationException.Reason;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AllocationTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String RES = "example.com/foo";

  @TempDir Path dir;
  FakeKubelet kubelet;
  TestPlugin plugin;

  void start(boolean preStart, boolean preferred) {
    start(preStart, preferred, true);
  }

  void start(boolean preStart, boolean preferred, boolean strict) {
    kubelet = FakeKubelet.builder().pluginDir(dir).strictPreferredAllocation(strict).start();
    plugin = new TestPlugin(RES, dir.resolve("foo.sock")).devices(TestPlugin.healthyDevices(4));
    plugin.options(preStart, preferred).start().register(kubelet.kubeletSocket());
    kubelet.awaitDevices(RES, l -> l.size() == 4, WAIT);
  }

  @AfterEach
  void stop() {
    plugin.close();
    kubelet.close();
  }

  @Test
  void pluginChannelCallsThePluginDirectlyWithoutBookkeepingAndEndsWithTheConnection() {
    start(false, false);
    assertThat(kubelet.pluginChannel("example.com/unknown")).isEmpty();
    ManagedChannel channel = kubelet.pluginChannel(RES).orElseThrow();
    AllocateResponse response =
        DevicePluginGrpc.newBlockingStub(channel)
            .withDeadlineAfter(5, TimeUnit.SECONDS)
            .allocate(
                AllocateRequest.newBuilder()
                    .addContainerRequests(
                        ContainerAllocateRequest.newBuilder().addDevicesIds("dev-2"))
                    .build());
    assertThat(response.getContainerResponses(0).getEnvsMap())
        .containsEntry("TEST_DEVICES", "dev-2");
    assertThat(kubelet.allocations()).isEmpty(); // a direct call is not an allocation of the fake
    kubelet.dropConnection(RES);
    assertThat(kubelet.pluginChannel(RES)).isEmpty();
  }

  @Test
  void allocatesHealthyUnallocatedDevicesAndReturnsTheResponse() throws Exception {
    start(false, false);
    Allocation a = kubelet.allocate(RES, 2);
    assertThat(a.deviceIds()).containsExactly("dev-0", "dev-1");
    assertThat(a.resourceName()).isEqualTo(RES);
    assertThat(a.containerName()).isEqualTo("main");
    assertThat(a.envs()).containsEntry("TEST_DEVICES", "dev-0,dev-1");
    assertThat(a.devices())
        .containsExactly(
            new io.github.deviceplugin4j.testkit.DeviceSpec("/dev/dev-0", "/dev/dev-0", "rw"),
            new io.github.deviceplugin4j.testkit.DeviceSpec("/dev/dev-1", "/dev/dev-1", "rw"));
    assertThat(a.mounts()).containsExactly(new MountSpec("/usr/local/test", "/opt/test/lib", true));
    assertThat(a.annotations()).containsEntry("example.com/devices", "dev-0,dev-1");
    assertThat(a.cdiDevices()).containsExactly("example.com/test=dev-0", "example.com/test=dev-1");
    assertThat(a.problems()).isEmpty();
    // Exactly one container request per Allocate call.
    assertThat(plugin.allocations.poll(1, TimeUnit.SECONDS).getContainerRequestsCount())
        .isEqualTo(1);
    // Allocated devices are not chosen again; unhealthy ones never.
    plugin.update(
        List.of(
            TestPlugin.device("dev-0", "Healthy", 0),
            TestPlugin.device("dev-1", "Healthy", 1),
            TestPlugin.device("dev-2", "Unhealthy", 0),
            TestPlugin.device("dev-3", "Healthy", 1)));
    kubelet.awaitDevices(RES, l -> !l.get(2).healthy(), WAIT);
    assertThat(kubelet.allocate(RES, 1).deviceIds()).containsExactly("dev-3");
    assertThatThrownBy(() -> kubelet.allocate(RES, 1))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.NOT_ALLOCATABLE);
              assertThat(e.description())
                  .isEqualTo(
                      "requested number of devices unavailable for example.com/foo."
                          + " Requested: 1, Available: 0");
            });
    kubelet.release(a.podUid());
    assertThat(kubelet.allocate(RES, 2).deviceIds()).containsExactly("dev-0", "dev-1");
    assertThat(kubelet.allocations()).hasSize(2);
  }

  @Test
  void aResourceNeverRegisteredIsAdmittedWithNoDevicesAndNoPluginCall() {
    // allocateContainerResources (pkg/kubelet/cm/devicemanager/manager.go) skips a resource for
    // which isDevicePluginResource is false (no healthyDevices entry, nothing allocated): the
    // container is admitted with no devices and no plugin is called.
    start(false, false);
    Allocation a = kubelet.allocate("example.com/nope", 1);
    assertThat(a.deviceIds()).isEmpty();
    assertThat(a.envs()).isEmpty();
    assertThat(kubelet.allocations()).isEmpty();
    assertThat(plugin.allocations).isEmpty();
    assertThat(kubelet.events())
        .anyMatch(
            e ->
                e.kind() == Kind.ALLOCATE
                    && e.resource().equals("example.com/nope")
                    && e.detail().contains("admitted with no devices"));
  }

  @Test
  void aResourceWhoseOnlyListWasOverFourMebibytesIsAdmittedWithNoDevices() {
    // The 4 MiB receive limit fails the first list (kubernetes#109304): the kubelet never got a
    // device list, so healthyDevices has no entry and isDevicePluginResource is false.
    kubelet = FakeKubelet.builder().pluginDir(dir).start();
    List<io.github.deviceplugin4j.api.v1beta1.Device> many = new java.util.ArrayList<>();
    String pad = "x".repeat(50);
    for (int i = 0; i < 80_000; i++) {
      many.add(TestPlugin.device(pad + i, "Healthy", -1));
    }
    plugin = new TestPlugin(RES, dir.resolve("foo.sock")).devices(many);
    plugin.start().register(kubelet.kubeletSocket());
    kubelet.awaitEvent(
        e -> e.kind() == Kind.LIST_AND_WATCH && e.outcome() == KubeletEvent.Outcome.FAILED, WAIT);
    Allocation a = kubelet.allocate(RES, 1);
    assertThat(a.deviceIds()).isEmpty();
    assertThat(plugin.allocations).isEmpty();
  }

  @Test
  void beforeTheFirstListACountIsAdmittedEmptyButExplicitIdsReachThePlugin() {
    // Registered, no list yet: the kubelet admits the container with nothing (manager.go
    // isDevicePluginResource); explicit IDs are the fake's own request, sent as given.
    kubelet = FakeKubelet.builder().pluginDir(dir).start();
    plugin =
        new TestPlugin(RES, dir.resolve("foo.sock"))
            .devices(TestPlugin.healthyDevices(2))
            .firstListDelayMillis(600_000); // never within the test
    plugin.start().register(kubelet.kubeletSocket());
    assertThat(kubelet.allocate(RES, 1).deviceIds()).isEmpty();
    assertThat(plugin.allocations).isEmpty();
    assertThat(kubelet.allocate(RES, "dev-1").deviceIds()).containsExactly("dev-1");
    assertThat(plugin.allocations).hasSize(1);
  }

  @Test
  void noHealthyDevicesFailsWithTheKubeletsAdmissionText() {
    // devicesToAllocate (manager.go), wrapped by unexpectedAdmissionError
    // (pkg/kubelet/cm/admission/errors.go).
    start(false, false);
    kubelet.dropConnection(RES);
    assertThatThrownBy(() -> kubelet.allocate(RES, 1))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.NOT_ALLOCATABLE);
              assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "Allocate failed due to no healthy devices present; cannot allocate"
                          + " unhealthy devices example.com/foo, which is unexpected");
            });
  }

  @Test
  void aResourceRemovedWhileAPodStillHoldsItsDevicesIsRefusedAsUnregistered() {
    // isDevicePluginResource also holds for a resource with devices still allocated; then
    // devicesToAllocate finds no healthyDevices entry: "cannot allocate unregistered device".
    kubelet = FakeKubelet.builder().pluginDir(dir).gracePeriod(Duration.ofMillis(200)).start();
    plugin = new TestPlugin(RES, dir.resolve("foo.sock")).devices(TestPlugin.healthyDevices(2));
    plugin.start().register(kubelet.kubeletSocket());
    kubelet.awaitDevices(RES, l -> l.size() == 2, WAIT);
    kubelet.allocate(RES, 1);
    plugin.close();
    // The grace period is 200 ms; WAIT leaves a loaded machine room for the timer.
    kubelet.awaitEvent(e -> e.kind() == Kind.RESOURCE_REMOVED, WAIT);
    assertThatThrownBy(() -> kubelet.allocate(RES, 1))
        .hasMessage(
            "Allocate failed due to cannot allocate unregistered device example.com/foo, which is"
                + " unexpected");
  }

  @Test
  void explicitIdsAreSentAsGivenAndThePluginsRefusalIsReported() {
    start(false, false);
    assertThat(kubelet.allocate(RES, "dev-3", "dev-1").deviceIds())
        .containsExactly("dev-3", "dev-1");
    assertThatThrownBy(() -> kubelet.allocate(RES, "no-such-device"))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.RPC_FAILED);
              assertThat(e.rpc()).isEqualTo("Allocate");
              assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.description()).contains("unknown device no-such-device");
              // The endpoint returns grpc-go's status error; admission wraps it.
              assertThat(e.getMessage())
                  .startsWith("Allocate failed due to rpc error: code = InvalidArgument desc = ")
                  .contains("unknown device no-such-device")
                  .endsWith(", which is unexpected");
            });
  }

  @Test
  void anEmptyContainerResponsesIsAnError() {
    start(false, false);
    plugin.allocateAnswer(r -> AllocateResponse.getDefaultInstance());
    assertThatThrownBy(() -> kubelet.allocate(RES, 1))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.INVALID_RESPONSE);
              assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
              assertThat(e.description()).startsWith("no containers return in allocation response");
              // allocateContainerResources prints the response with gogo-protobuf's String().
              assertThat(e.getMessage())
                  .isEqualTo(
                      "Allocate failed due to no containers return in allocation response"
                          + " &AllocateResponse{ContainerResponses:[]*ContainerAllocateResponse{},},"
                          + " which is unexpected");
            });
    // A failed allocation holds no devices.
    assertThat(kubelet.allocations()).isEmpty();
  }

  @Test
  void moreThanOneContainerResponseIsAnErrorWhenStrict() {
    start(false, false);
    plugin.allocateAnswer(
        r ->
            AllocateResponse.newBuilder()
                .addContainerResponses(ContainerAllocateResponse.getDefaultInstance())
                .addContainerResponses(ContainerAllocateResponse.getDefaultInstance())
                .build());
    assertThatThrownBy(() -> kubelet.allocate(RES, 1))
        .hasMessageContaining("container_responses has 2 entries for one container request");
  }

  @Test
  void malformedResponsesAreReportedByProblems() {
    start(false, false);
    plugin.allocateAnswer(
        r ->
            AllocateResponse.newBuilder()
                .addContainerResponses(
                    ContainerAllocateResponse.newBuilder()
                        .putEnvs("1BAD=", "x")
                        .addDevices(
                            DeviceSpec.newBuilder()
                                .setHostPath("dev/x")
                                .setContainerPath("/dev/x")
                                .setPermissions("rx"))
                        .addCdiDevices(
                            io.github.deviceplugin4j.api.v1beta1.CDIDevice.newBuilder()
                                .setName("not-qualified")))
                .build());
    Allocation a = kubelet.allocate(RES, 1);
    assertThat(a.problems())
        .hasSize(4)
        .anyMatch(p -> p.contains("env name \"1BAD=\""))
        .anyMatch(p -> p.contains("device host_path \"dev/x\" is not an absolute path"))
        .anyMatch(p -> p.contains("permissions \"rx\""))
        .anyMatch(p -> p.contains("CDI device \"not-qualified\""));
  }

  @Test
  void asksForAPreferredAllocationWhenAdvertisedAndUsesIt() {
    start(false, true);
    AtomicReference<PreferredAllocationRequest> seen = new AtomicReference<>();
    plugin.preferredAnswer(
        r -> {
          seen.set(r);
          return PreferredAllocationResponse.newBuilder()
              .addContainerResponses(
                  ContainerPreferredAllocationResponse.newBuilder()
                      .addDeviceIDs("dev-3")
                      .addDeviceIDs("dev-2"))
              .build();
        });
    assertThat(kubelet.allocate(RES, 2).deviceIds()).containsExactly("dev-3", "dev-2");
    ContainerPreferredAllocationRequest c = seen.get().getContainerRequests(0);
    assertThat(seen.get().getContainerRequestsCount()).isEqualTo(1);
    assertThat(c.getAvailableDeviceIDsList())
        .containsExactlyInAnyOrder("dev-0", "dev-1", "dev-2", "dev-3");
    assertThat(c.getMustIncludeDeviceIDsList()).isEmpty();
    assertThat(c.getAllocationSize()).isEqualTo(2);
    // Explicit IDs skip GetPreferredAllocation, like a kubelet that has nothing to choose.
    seen.set(null);
    kubelet.allocate(RES, "dev-0");
    assertThat(seen.get()).isNull();
  }

  @Test
  void aPreferredAnswerOutsideTheAvailableSetFailsWhenStrict() {
    start(false, true);
    kubelet.allocate(RES, "dev-0");
    plugin.preferredAnswer(r -> preferred("dev-0", "dev-1"));
    assertThatThrownBy(() -> kubelet.allocate(RES, 2))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.INVALID_RESPONSE);
              assertThat(e.rpc()).isEqualTo("GetPreferredAllocation");
              assertThat(e.description())
                  .contains("device \"dev-0\" is not in available_deviceIDs [dev-1 dev-2 dev-3]");
            });
  }

  @Test
  void aPreferredAnswerOfTheWrongSizeFailsWhenStrict() {
    start(false, true);
    plugin.preferredAnswer(r -> preferred("dev-1"));
    assertThatThrownBy(() -> kubelet.allocate(RES, 2))
        .hasMessageContaining("it prefers 1 devices but allocation_size is 2");
  }

  @Test
  void aPreferredAnswerWithoutAMustIncludeDeviceFailsWhenStrict() {
    start(false, true);
    AtomicReference<PreferredAllocationRequest> seen = new AtomicReference<>();
    plugin.preferredAnswer(
        r -> {
          seen.set(r);
          return preferred("dev-2", "dev-3");
        });
    assertThatThrownBy(() -> kubelet.allocate(PodRequest.count(RES, 2).withMustInclude("dev-0")))
        .hasMessageContaining("must-include device \"dev-0\" is missing");
    ContainerPreferredAllocationRequest c = seen.get().getContainerRequests(0);
    assertThat(c.getMustIncludeDeviceIDsList()).containsExactly("dev-0");
    assertThat(c.getAvailableDeviceIDsList()).contains("dev-0");
    // A correct answer that includes it works.
    plugin.preferredAnswer(r -> preferred("dev-0", "dev-3"));
    assertThat(kubelet.allocate(PodRequest.count(RES, 2).withMustInclude("dev-0")).deviceIds())
        .containsExactly("dev-0", "dev-3");
  }

  @Test
  void whenLenientABadPreferredAnswerIsRepairedLikeTheKubeletDoes() {
    start(false, true, false);
    kubelet.allocate(RES, "dev-0");
    plugin.preferredAnswer(r -> preferred("dev-0", "dev-3", "dev-9"));
    Allocation a = kubelet.allocate(RES, 2);
    // dev-0 is taken and dev-9 unknown: the kubelet keeps dev-3 and fills up from available.
    assertThat(a.deviceIds()).containsExactly("dev-3", "dev-1");
    assertThat(kubelet.events())
        .anyMatch(
            e ->
                e.kind() == Kind.GET_PREFERRED_ALLOCATION
                    && e.outcome() == KubeletEvent.Outcome.INFO
                    && e.detail().contains("not in available_deviceIDs"));
  }

  @Test
  void callsPreStartContainerWhenRequired() throws Exception {
    start(true, false);
    Allocation a = kubelet.allocate(RES, 2);
    assertThat(plugin.preStarts.poll(1, TimeUnit.SECONDS).getDevicesIdsList())
        .containsExactlyElementsOf(a.deviceIds());
    assertThat(kubelet.events()).anyMatch(e -> e.kind() == Kind.PRE_START_CONTAINER);
  }

  @Test
  void theJournalListsTheAllocateBeforeThePreStartContainerThatFollowedIt() {
    // Wire order: the kubelet calls Allocate at admission and PreStartContainer when the
    // container starts.
    start(true, false);
    kubelet.allocate(RES, 1);
    List<Kind> kinds =
        kubelet.events().stream()
            .filter(e -> e.outcome() == KubeletEvent.Outcome.OK)
            .map(KubeletEvent::kind)
            .filter(k -> k == Kind.ALLOCATE || k == Kind.PRE_START_CONTAINER)
            .toList();
    assertThat(kinds).containsExactly(Kind.ALLOCATE, Kind.PRE_START_CONTAINER);
  }

  @Test
  void aFailedPreStartContainerKeepsTheDevicesAllocatedAndReadsLikeTheKubelet() {
    // callPreStartContainerIfNeeded (manager.go) runs when the container starts, after
    // admission: the devices stay with the pod, the error is not an admission error.
    start(true, false);
    plugin.preStartAnswer(
        r -> {
          throw Status.UNAVAILABLE.withDescription("device busy").asRuntimeException();
        });
    assertThatThrownBy(() -> kubelet.allocate(RES, 1))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.rpc()).isEqualTo("PreStartContainer");
              assertThat(e.getMessage())
                  .isEqualTo(
                      "device plugin PreStartContainer rpc failed with err: rpc error:"
                          + " code = Unavailable desc = device busy");
            });
    assertThat(kubelet.allocations()).hasSize(1);
  }

  @Test
  void doesNotCallPreStartContainerWhenNotRequired() {
    start(false, false);
    kubelet.allocate(RES, 1);
    assertThat(plugin.preStarts).isEmpty();
  }

  @Test
  void theSameContainerGetsItsDevicesAgainWithoutRpcs() {
    start(false, false);
    PodRequest r = PodRequest.count(RES, 2);
    Allocation first = kubelet.allocate(r);
    plugin.allocations.clear();
    assertThat(kubelet.allocate(r)).isEqualTo(first);
    assertThat(plugin.allocations).isEmpty();
    assertThatThrownBy(
            () ->
                kubelet.allocate(
                    PodRequest.count(RES, 1).withPod(r.namespace(), r.podName(), r.podUid())))
        .hasMessageContaining("changed request for resource \"example.com/foo\" from 2 to 1");
  }

  @Test
  void releasesOneContainerOfAPod() {
    start(false, false);
    PodRequest main = PodRequest.count(RES, 1);
    kubelet.allocate(main);
    kubelet.allocate(main.withContainer("side"));
    assertThat(kubelet.allocations()).hasSize(2);
    kubelet.release(main.podUid(), "side");
    assertThat(kubelet.allocations())
        .singleElement()
        .extracting(Allocation::containerName)
        .isEqualTo("main");
    assertThat(kubelet.allocate(RES, 3).deviceIds()).doesNotContain("dev-0");
    assertThatThrownBy(() -> kubelet.release(main.podUid(), "side"))
        .hasMessageContaining("no allocation for container side");
  }

  @Test
  void releasingAnUnknownPodIsAMistake() {
    start(false, false);
    assertThatThrownBy(() -> kubelet.release("nope"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no allocation for pod UID nope");
  }

  private static PreferredAllocationResponse preferred(String... ids) {
    return PreferredAllocationResponse.newBuilder()
        .addContainerResponses(
            ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(List.of(ids)))
        .build();
  }
}
