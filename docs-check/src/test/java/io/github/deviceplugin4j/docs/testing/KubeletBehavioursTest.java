package io.github.deviceplugin4j.docs.testing;

import static io.github.deviceplugin4j.testkit.assertj.KubeletAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.PodRequest;
import io.github.deviceplugin4j.testkit.Registration;
import io.github.deviceplugin4j.testkit.junit5.FakeKubeletExtension;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The kubelet behaviours testing.md shows how to drive. */
class KubeletBehavioursTest {

  static final String RESOURCE = "example.com/accel";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension
  FakeKubeletExtension extension =
      FakeKubeletExtension.create().withGracePeriod(Duration.ofMillis(500));

  @TempDir Path root;
  FakeKubelet kubelet;
  DevicePluginHost host;

  @BeforeEach
  void start() throws IOException {
    Files.createDirectories(root.resolve("dev"));
    for (String name : new String[] {"accel0", "accel1", "accel2"}) {
      Files.createFile(root.resolve("dev").resolve(name));
    }
    kubelet = extension.get();
    host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .backend(new AccelBackend(root))
            .start();
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 3, WAIT);
  }

  @AfterEach
  void stop() {
    host.close();
  }

  @Test
  void podsAllocateAndRelease() {
    // tag::pods[]
    PodRequest trainer = PodRequest.count(RESOURCE, 2).withPod("ml", "trainer-0", "uid-trainer");
    Allocation first = kubelet.allocate(trainer);
    Allocation second = kubelet.allocate(RESOURCE, 1); // a fresh pod, container "main"

    assertThat(first.deviceIds()).hasSize(2).doesNotContainAnyElementsOf(second.deviceIds());
    assertThatThrownBy(() -> kubelet.allocate(RESOURCE, 1)) // all three are taken
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.NOT_ALLOCATABLE));

    kubelet.release("uid-trainer"); // the pod is deleted
    assertThat(kubelet.allocate(RESOURCE, 2).deviceIds()).hasSize(2);
    // end::pods[]
  }

  @Test
  void aPluginSurvivesWhatTheKubeletDoes() {
    // tag::behaviours[]
    kubelet.cancelListAndWatch(RESOURCE); // the kubelet opens a new stream
    kubelet.awaitDevices(RESOURCE, d -> d.size() == 3, WAIT);
    assertThat(kubelet.allocate(RESOURCE, "accel0")).isWellFormed();

    kubelet.dropConnection(RESOURCE); // devices turn Unhealthy at once
    assertThat(kubelet).hasCapacity(RESOURCE, 3).hasAllocatable(RESOURCE, 0);

    Mark restarted = kubelet.restart(); // sockets deleted, kubelet.sock served again
    kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
    kubelet.awaitDevices(RESOURCE, d -> d.stream().filter(DeviceState::healthy).count() == 3, WAIT);
    // end::behaviours[]
    assertThat(kubelet).hasAllocatable(RESOURCE, 3);
  }

  @Test
  void marksSeeEverythingAfterThem() {
    // tag::marks[]
    Mark m = kubelet.restart(); // taken before the restart begins
    Registration again = kubelet.awaitRegistration(RESOURCE, m, WAIT); // however fast it came
    KubeletEvent list =
        kubelet.awaitEvent(
            m, e -> e.kind() == KubeletEvent.Kind.LIST_AND_WATCH && e.seq() > again.seq(), WAIT);
    assertThat(list.healthy()).hasValue(3); // typed fields, no parsing
    Duration firstList = Duration.ofNanos(list.nanos() - again.nanos());
    assertThat(firstList).isPositive();
    // One window without allocatable devices: from the restart to that first list.
    assertThat(kubelet.unhealthyWindows(RESOURCE, m))
        .singleElement()
        .satisfies(w -> assertThat(w.open()).isFalse());
    // end::marks[]
  }

  @Test
  void theEventLogRecordsEveryCall() {
    AllocationException e =
        (AllocationException)
            org.assertj.core.api.Assertions.catchThrowable(
                () -> kubelet.allocate(RESOURCE, "accel9"));
    // tag::events[]
    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(kubelet.events())
        .filteredOn(KubeletEvent::failed)
        .extracting(KubeletEvent::kind)
        .containsExactly(KubeletEvent.Kind.ALLOCATE);
    assertThat(kubelet.eventLog()) // one line per event; failing awaits print it too
        .contains("ALLOCATE example.com/accel FAILED: [accel9]: INVALID_ARGUMENT");
    // end::events[]
  }
}
