package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The kubelet's device-manager semantics on the socket-free model, on a fake clock: client and
 * endpoint bookkeeping per {@link KubeletProfile}, lists from any client, the grace period, the
 * checkpoint after a restart, and the availability journal.
 */
class DeviceManagerModelTest {
  static final String RES = "example.com/foo";
  static final Duration GRACE = Duration.ofMinutes(5);
  static final Path DIR = Path.of("/p");

  private final FakeClock clock = new FakeClock();
  private final EventJournal journal =
      new EventJournal("/p", clock::nanos, () -> Instant.EPOCH, List.of());

  private DeviceManagerModel model(KubeletProfile profile) {
    return new DeviceManagerModel(journal, profile, GRACE, clock);
  }

  /** Registers a plugin on {@code socket} and returns its endpoint. */
  private static Endpoint register(DeviceManagerModel m, String socket, FakeConnection c) {
    m.registered(
            RES, DIR.resolve(socket), "v1beta1", Registration.Mode.LEGACY, false, false, null, c)
        .orElseThrow();
    return m.locked(() -> m.resource(RES).endpoint);
  }

  private static List<DeviceState> healthy(int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> new DeviceState("dev-" + i, DeviceState.HEALTHY, List.of()))
        .toList();
  }

  private static void list(DeviceManagerModel m, Endpoint ep, FakeConnection c, int n) {
    m.listReceived(ep, c.lastGeneration(), healthy(n), 10L * n);
  }

  private int allocatable(DeviceManagerModel m) {
    return ResourceState.allocatableOf(m.devices(RES));
  }

  @Test
  void aRegistrationMakesTheEndpointCurrentAndOpensAStream() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);

    assertThat(a.generations).containsExactly(1);
    assertThat(m.liveEndpoint(RES)).containsSame(ep);
    assertThat(m.connectedResources()).containsExactly(RES);
    assertThat(m.registrations())
        .singleElement()
        .satisfies(r -> assertThat(r.endpoint()).isEqualTo("/p/a.sock"));
  }

  @Test
  void aSecondRegistrationKeepsTheOldConnectionOpenAndItsListsStillCount() {
    DeviceManagerModel m = model(KubeletProfile.V1_27);
    FakeConnection a = new FakeConnection();
    FakeConnection b = new FakeConnection();
    Endpoint old = register(m, "a.sock", a);
    Endpoint current = register(m, "b.sock", b);
    list(m, current, b, 2);

    list(m, old, a, 3);

    assertThat(a.closed).isFalse();
    assertThat(m.liveEndpoint(RES)).containsSame(current);
    assertThat(m.devices(RES)).hasSize(3);
    assertThat(journal.events())
        .anySatisfy(e -> assertThat(e.detail()).contains("supersedes the one on /p/a.sock"))
        .anySatisfy(
            e ->
                assertThat(e.detail())
                    .isEqualTo(
                        "3 devices, 3 healthy (30 bytes) from the superseded client on /p/a.sock"));
  }

  @Test
  void upToV1_36aSupersededStreamEndClosesTheNewestConnectionAndStopsTheCurrentEndpoint() {
    DeviceManagerModel m = model(KubeletProfile.V1_27);
    FakeConnection a = new FakeConnection();
    FakeConnection b = new FakeConnection();
    Endpoint old = register(m, "a.sock", a);
    Endpoint current = register(m, "b.sock", b);
    list(m, current, b, 2);

    m.streamEnded(old, a.lastGeneration(), null, false);

    assertThat(b.closed).as("the newest client is the one disconnected").isTrue();
    assertThat(a.closed).isFalse();
    assertThat(current.stopped).isTrue();
    assertThat(m.liveEndpoint(RES)).isEmpty();
    assertThat(m.devices(RES)).hasSize(2).noneMatch(DeviceState::healthy);
    assertThat(journal.events())
        .filteredOn(e -> e.kind() == Kind.DISCONNECT)
        .singleElement()
        .satisfies(e -> assertThat(e.endpoint()).hasValue("/p/b.sock"));
  }

  @Test
  void fromV1_37aSupersededStreamEndClosesItsOwnConnectionButStillStopsTheCurrentEndpoint() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    FakeConnection b = new FakeConnection();
    Endpoint old = register(m, "a.sock", a);
    Endpoint current = register(m, "b.sock", b);
    list(m, current, b, 2);

    m.streamEnded(old, a.lastGeneration(), "UNAVAILABLE: closed", false);

    assertThat(a.closed).isTrue();
    assertThat(b.closed).as("the current connection stays open").isFalse();
    assertThat(current.stopped).isTrue();
    assertThat(allocatable(m)).isZero();

    list(m, current, b, 2);
    assertThat(allocatable(m)).as("a later list makes the devices healthy again").isEqualTo(2);
    assertThat(m.liveEndpoint(RES)).as("while the endpoint stays stopped").isEmpty();
  }

  @Test
  void aStreamEndAfterTheKubeletClosedTheConnectionDisconnectsNothingMore() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);
    list(m, ep, a, 1);
    m.dropConnection(RES);
    long disconnects = journal.events().stream().filter(e -> e.kind() == Kind.DISCONNECT).count();

    m.streamEnded(ep, a.lastGeneration(), "CANCELLED", false);

    assertThat(a.closed).isTrue();
    assertThat(journal.events().stream().filter(e -> e.kind() == Kind.DISCONNECT).count())
        .isEqualTo(disconnects);
  }

  @Test
  void theResourceIsRemovedWhenTheGracePeriodEndsWithoutARegistration() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);
    list(m, ep, a, 2);
    m.streamEnded(ep, a.lastGeneration(), null, false);

    clock.advance(GRACE.minusNanos(1));
    assertThat(m.resources()).containsExactly(RES);

    clock.advance(Duration.ofNanos(1));
    assertThat(m.resources()).isEmpty();
    assertThat(m.devices(RES)).isEmpty();
    assertThat(journal.events())
        .last()
        .satisfies(e -> assertThat(e.kind()).isEqualTo(Kind.RESOURCE_REMOVED));
  }

  @Test
  void aRegistrationWithinTheGracePeriodKeepsTheResource() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);
    m.streamEnded(ep, a.lastGeneration(), null, false);
    clock.advance(GRACE.dividedBy(2));

    register(m, "a.sock", new FakeConnection());
    clock.advance(GRACE);

    assertThat(m.resources()).containsExactly(RES);
    assertThat(m.liveEndpoint(RES)).isPresent();
  }

  @Test
  void anOutageUntilTheNextRegistrationIsOneWindowOfThatLength() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);
    list(m, ep, a, 2);
    Mark before = journal.mark();

    m.streamEnded(ep, a.lastGeneration(), null, false);
    clock.advance(Duration.ofMillis(3));
    FakeConnection b = new FakeConnection();
    Endpoint again = register(m, "b.sock", b);
    list(m, again, b, 2);

    List<UnhealthyWindow> windows = journal.unhealthyWindows(RES, before);
    assertThat(windows).hasSize(1);
    assertThat(windows.get(0).open()).isFalse();
    assertThat(windows.get(0).duration()).isEqualTo(Duration.ofMillis(3));
  }

  @Test
  void afterAKubeletRestartTheResourceIsKnownFromItsCheckpointOnly() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    FakeConnection b = new FakeConnection();
    register(m, "a.sock", a);
    Endpoint current = register(m, "b.sock", b);
    list(m, current, b, 2);

    m.kubeletRestarted();

    assertThat(a.closed).isTrue();
    assertThat(b.closed).isTrue();
    assertThat(m.resources()).containsExactly(RES);
    assertThat(m.devices(RES)).as("capacity 0").isEmpty();
    assertThat(m.connectedResources()).isEmpty();
    Endpoint checkpoint = m.locked(() -> m.resource(RES).endpoint);
    assertThat(checkpoint.fromCheckpoint).isTrue();
    assertThat(checkpoint.stopped).isTrue();
    assertThat(checkpoint.preStartRequired).as("options unknown until it registers").isFalse();
  }

  @Test
  void afterAKubeletRestartAResourceWhosePluginNeverReturnsIsRemovedAfterTheGracePeriod() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);
    list(m, ep, a, 2);
    clock.advance(GRACE.dividedBy(2));

    // The new kubelet process gives the checkpoint's endpoint a stop time of its own start.
    m.kubeletRestarted();
    clock.advance(GRACE.minusNanos(1));
    assertThat(m.resources()).containsExactly(RES);

    clock.advance(Duration.ofNanos(1));
    assertThat(m.resources()).isEmpty();
    assertThat(journal.events())
        .last()
        .satisfies(e -> assertThat(e.kind()).isEqualTo(Kind.RESOURCE_REMOVED));
  }

  @Test
  void afterAKubeletRestartARegistrationWithinTheGracePeriodKeepsTheResource() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    register(m, "a.sock", a);
    m.kubeletRestarted();
    clock.advance(GRACE.dividedBy(2));

    register(m, "a.sock", new FakeConnection());
    clock.advance(GRACE);

    assertThat(m.resources()).containsExactly(RES);
    assertThat(m.liveEndpoint(RES)).isPresent();
  }

  @Test
  void aCancelledStreamIsReplacedAndItsLateMessagesAreIgnored() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);
    int first = a.lastGeneration();
    list(m, ep, a, 2);

    m.cancelStream(RES);
    m.listReceived(ep, first, healthy(5), 50);
    m.streamEnded(ep, first, "CANCELLED", false);

    assertThat(a.cancels).isEqualTo(1);
    assertThat(a.generations).hasSize(2);
    assertThat(a.lastGeneration()).isGreaterThan(first);
    assertThat(m.devices(RES)).hasSize(2);
    assertThat(m.liveEndpoint(RES)).isPresent();
  }

  @Test
  void aDeregisteredRegistrySocketDisconnectsItsClientFromV1_37() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Path registry = Path.of("/r/foo.sock");
    m.registered(
        RES,
        DIR.resolve("a.sock"),
        "v1beta1",
        Registration.Mode.PLUGIN_WATCHER,
        false,
        false,
        registry,
        a);

    m.deregisterPlugin(RES, registry);

    assertThat(journal.events())
        .anySatisfy(e -> assertThat(e.kind()).isEqualTo(Kind.DEREGISTER))
        .anySatisfy(e -> assertThat(e.kind()).isEqualTo(Kind.DISCONNECT));
    assertThat(a.closed).isTrue();
    assertThat(m.liveEndpoint(RES)).isEmpty();
  }

  @Test
  void aClosedModelInstallsNothingAndStartsNoTimer() {
    DeviceManagerModel m = model(KubeletProfile.LATEST);
    FakeConnection a = new FakeConnection();
    Endpoint ep = register(m, "a.sock", a);
    assertThat(m.beginClose()).isTrue();
    assertThat(m.beginClose()).isFalse();

    m.closeAll();
    FakeConnection late = new FakeConnection();
    assertThat(
            m.registered(
                RES,
                DIR.resolve("b.sock"),
                "v1beta1",
                Registration.Mode.LEGACY,
                false,
                false,
                null,
                late))
        .isEmpty();

    assertThat(a.closed).isTrue();
    assertThat(ep.stopped).isTrue();
    assertThat(late.generations).isEmpty();
    assertThat(clock.pending()).isZero();
    assertThatThrownBy(m::checkOpen).hasMessageContaining("closed");
  }

  /** A connection that only records what the model asked of it. */
  static final class FakeConnection implements DeviceManagerModel.Connection {
    final List<Integer> generations = new ArrayList<>();
    int cancels;
    boolean closed;

    int lastGeneration() {
      return generations.get(generations.size() - 1);
    }

    @Override
    public void openStream(Endpoint endpoint, int generation) {
      generations.add(generation);
    }

    @Override
    public void cancelStream() {
      cancels++;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  /** A clock that moves only when told, and runs the timers that fall due. */
  static final class FakeClock implements DeviceManagerModel.Timers {
    private long nanos = 1_000_000;
    private final List<Timer> timers = new ArrayList<>();

    long nanos() {
      return nanos;
    }

    @Override
    public Runnable schedule(Runnable task, Duration delay) {
      Timer t = new Timer(nanos + delay.toNanos(), task);
      timers.add(t);
      return () -> timers.remove(t);
    }

    int pending() {
      return timers.size();
    }

    void advance(Duration d) {
      nanos += d.toNanos();
      for (Timer t : List.copyOf(timers)) {
        if (t.due <= nanos && timers.remove(t)) {
          t.task.run();
        }
      }
    }

    private record Timer(long due, Runnable task) {}
  }
}
