package io.github.deviceplugin4j.docs.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletExtension;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The status codes writing-a-backend.md and operations.md say the kubelet sees. */
class ErrorsTest {

  static final String RESOURCE = "example.com/accel";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension FakeKubeletExtension extension = FakeKubeletExtension.create();
  @TempDir Path root;
  FakeKubelet kubelet;
  DevicePluginHost host;
  final CountDownLatch never = new CountDownLatch(1);

  @BeforeEach
  void node() throws IOException {
    kubelet = extension.get();
    Nodes.accelerator(root, "accel0", 0, "ok");
    Nodes.accelerator(root, "accel1", 0, "error");
  }

  @AfterEach
  void stop() {
    never.countDown();
    host.close();
  }

  /** A backend whose Allocate does what the test says. */
  class Scripted extends AccelBackend implements Allocator {
    final Function<AllocationRequest, ContainerAllocation> answer;

    Scripted(Function<AllocationRequest, ContainerAllocation> answer) {
      super(root);
      this.answer = answer;
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) {
      return answer.apply(request);
    }
  }

  private void start(AccelBackend backend) {
    host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .allocateDeadline(Duration.ofMillis(300))
            .backend(backend)
            .start();
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
  }

  private AllocationException allocationFailure(String... ids) {
    Throwable t =
        org.assertj.core.api.Assertions.catchThrowable(() -> kubelet.allocate(RESOURCE, ids));
    assertThat(t).isInstanceOf(AllocationException.class);
    return (AllocationException) t;
  }

  @Test
  void unknownDeviceIsInvalidArgument() {
    start(new AccelBackend(root));
    AllocationException e = allocationFailure("accel7");
    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.description())
        .isEqualTo(
            "Allocate container request 0 for example.com/accel names unknown device IDs"
                + " [\"accel7\"] (the plugin advertises 2 devices)");
  }

  @Test
  void unhealthyDeviceIsFailedPrecondition() {
    start(new AccelBackend(root));
    AllocationException e = allocationFailure("accel1");
    assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(e.description())
        .isEqualTo(
            "Allocate container request 0 for example.com/accel names unhealthy devices"
                + " [\"accel1\"]");
  }

  @Test
  void aThrowingBackendIsInternal() {
    start(
        new Scripted(
            r -> {
              throw new IllegalStateException("firmware not loaded");
            }));
    AllocationException e = allocationFailure("accel0");
    assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.description())
        .isEqualTo(
            "the backend failed in Allocate for example.com/accel: IllegalStateException:"
                + " firmware not loaded");
  }

  @Test
  void invalidBackendDataIsInternalAndNamesTheProblem() {
    start(
        new Scripted(
            r ->
                r.defaultAllocation().toBuilder()
                    .deviceNode(new DeviceNode("dev/accel0", "/dev/accel0", "rwx"))
                    .build()));
    AllocationException e = allocationFailure("accel0");
    assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.description())
        .startsWith("backend returned invalid data in Allocate: container request 0:")
        .contains("\"dev/accel0\" is not absolute")
        .contains("contain 'x' (only r, w and m are allowed)");
  }

  @Test
  void aBackendTooSlowForItsAllocateDeadlineIsDeadlineExceeded() {
    start(
        new Scripted(
            r -> {
              try {
                never.await();
              } catch (InterruptedException cancelled) {
                Thread.currentThread().interrupt();
              }
              return r.defaultAllocation();
            }));
    AllocationException e = allocationFailure("accel0");
    assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(e.description())
        .isEqualTo(
            "the backend did not answer Allocate for example.com/accel within 300 ms"
                + " (allocateDeadline)");
  }

  @Test
  void theKubeletItselfRefusesUnhealthyDevicesWhenItChooses() {
    start(new AccelBackend(root));
    assertThatThrownBy(() -> kubelet.allocate(RESOURCE, 2))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.NOT_ALLOCATABLE));
  }
}
