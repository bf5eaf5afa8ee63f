package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regressions found by the reliability suites (module {@code reliability}); each test failed before
 * its fix.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReliabilityRegressionTest {

  private static final String RESOURCE = "example.com/dev";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;

  /** SIGTERM used to end a plugin's JVM with status 143 (the JVM's default), now 0. */
  @Test
  void run_onSigterm_removesTheSocketAndMainReturns_statusZero() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    Path log = tmp.resolve("out.log");
    Process p = startMain(dir, log, false);
    try {
      Path socket = dir.resolve("example.com_sig.sock");
      await().atMost(Duration.ofSeconds(30)).until(() -> SocketFiles.isLive(socket));
      long t0 = System.nanoTime();
      p.destroy(); // SIGTERM
      assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      String out = Files.readString(log, StandardCharsets.UTF_8);
      assertThat(p.exitValue()).as(out).isZero();
      assertThat(out).contains("run() returned");
      assertThat(Files.exists(socket, LinkOption.NOFOLLOW_LINKS)).isFalse();
      // Bound: well inside the pod's termination grace period (30 s by default, then SIGKILL); the
      // time itself is a figure of the reliability suite, not asserted here.
      assertThat(ms).isLessThan(10_000);
    } finally {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  /** An application thread must not make a plugin ignore SIGTERM: the default action follows. */
  @Test
  void run_onSigterm_withAStrayNonDaemonThread_theSignalsDefaultFollows() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    Path log = tmp.resolve("out.log");
    Process p = startMain(dir, log, true);
    try {
      Path socket = dir.resolve("example.com_sig.sock");
      await().atMost(Duration.ofSeconds(30)).until(() -> SocketFiles.isLive(socket));
      p.destroy();
      assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isEqualTo(143);
      assertThat(Files.exists(socket, LinkOption.NOFOLLOW_LINKS)).isFalse();
      assertThat(Files.readString(log, StandardCharsets.UTF_8)).contains("still running");
    } finally {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  /**
   * An {@link Error} escaping a thread of the host (here an OutOfMemoryError from a backend's
   * rescan): one ERROR naming it, and run() ends the process with a non-zero status instead of
   * leaving a plugin that serves nothing. Its socket is removed.
   */
  @Test
  void run_afterAFatalError_logsItOnce_removesTheSocket_andExitsNonZero() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    Path log = tmp.resolve("out.log");
    Process p = startMain(dir, log, "--fatal-rescan");
    try {
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the process ended").isTrue();
      String out = Files.readString(log, StandardCharsets.UTF_8);
      assertThat(p.exitValue()).as(out).isEqualTo(DevicePluginHost.EXIT_FATAL);
      assertThat(out)
          .contains("Fatal failure in thread deviceplugin4j-worker")
          .contains("simulated by the test: Java heap space")
          .contains("Exiting with status 70")
          .doesNotContain("run() returned");
      assertThat(out.lines().filter(l -> l.contains("Fatal failure")).count()).isEqualTo(1);
      assertThat(Files.exists(dir.resolve("example.com_sig.sock"), LinkOption.NOFOLLOW_LINKS))
          .isFalse();
    } finally {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  private Process startMain(Path dir, Path log, boolean strayThread) throws IOException {
    return startMain(dir, log, strayThread ? "--stray-thread" : null);
  }

  private Process startMain(Path dir, Path log, String option) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(SigtermMain.class.getName());
    cmd.add(dir.toString());
    if (option != null) {
      cmd.add(option);
    }
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  /**
   * The plugin's socket deleted while its Register call is in flight, and serving again failing:
   * the plugin used to report itself registered until the next safety check (5 s).
   */
  @Test
  void aRegistrationForASocketDeletedMeanwhileDoesNotCountAsRegistered() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    Path socket = dir.resolve("example.com_dev.sock");
    AtomicInteger calls = new AtomicInteger();
    try (ScriptedKubelet kubelet =
            new ScriptedKubelet(
                dir.resolve("kubelet.sock"),
                (request, answer) -> {
                  // A regular file takes the socket's place, renamed over it at once: no moment
                  // without a file there, in which the plugin could serve again, and no delete
                  // event either: serving again fails.
                  boolean ok =
                      onFirstCall(
                          calls,
                          answer,
                          () -> {
                            Path file = dir.resolve(".not-a-socket");
                            Files.writeString(file, "not a socket");
                            Files.move(file, socket, StandardCopyOption.ATOMIC_MOVE);
                          });
                  if (!ok) {
                    return;
                  }
                  answer.onNext(Empty.getDefaultInstance());
                  answer.onCompleted();
                });
        DevicePluginHost host =
            legacyHost(dir).safetyCheckInterval(Duration.ofMinutes(10)).start()) {
      await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() == 1);
      // Not registered: what the kubelet accepted is gone and serving again fails (the safety
      // check, which would notice too, runs only every 10 minutes here, far beyond the wait).
      await().atMost(WAIT).until(() -> !host.isReady());
      await().during(Duration.ofMillis(500)).atMost(WAIT).until(() -> !host.isReady());
      assertThat(host.status(RESOURCE).registered()).isFalse();
      assertThat(host.status(RESOURCE).lastError())
          .hasValueSatisfying(e -> assertThat(e).contains("is not a socket"));
    }
  }

  /**
   * The plugin's socket deleted while the kubelet is still dialling it for the Register in flight:
   * the plugin used to wait for that call to fail (the kubelet dials for 10 s) before serving
   * again; now it serves again at once and the registration in flight succeeds.
   */
  @Test
  void aSocketDeletedDuringRegistrationIsServedAgainWhileTheKubeletDials() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    Path socket = dir.resolve("example.com_dev.sock");
    AtomicInteger calls = new AtomicInteger();
    try (ScriptedKubelet kubelet =
            new ScriptedKubelet(
                dir.resolve("kubelet.sock"),
                (request, answer) -> {
                  if (!onFirstCall(calls, answer, () -> Files.delete(socket))) {
                    return;
                  }
                  // like the kubelet: dial the endpoint, retrying, for a while (here far longer
                  // than the test waits: a plugin that waited for this call to fail before
                  // serving again would never be ready in time, however fast the machine)
                  try {
                    await()
                        .atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> SocketFiles.isLive(socket));
                  } catch (org.awaitility.core.ConditionTimeoutException e) {
                    answer.onError(
                        Status.UNKNOWN
                            .withDescription("failed to dial device plugin")
                            .asException());
                    return;
                  }
                  answer.onNext(Empty.getDefaultInstance());
                  answer.onCompleted();
                });
        DevicePluginHost host = legacyHost(dir).start()) {
      await().atMost(Duration.ofSeconds(30)).until(host::isReady);
      assertThat(calls.get()).isEqualTo(1);
      assertThat(host.status(RESOURCE).registrations()).isEqualTo(1);
      assertThat(SocketFiles.isLive(socket)).isTrue();
    }
  }

  /**
   * A kubelet going away in the middle of Register is not a refusal, nor an error: the plugin waits
   * for the kubelet, as when kubelet.sock is missing.
   */
  @Test
  void aRegisterCallCutByTheKubeletGoingAwayIsNotReportedAsARefusal() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    RecordingListener listener = new RecordingListener();
    CountDownLatch arrived = new CountDownLatch(1);
    ScriptedKubelet kubelet =
        new ScriptedKubelet(dir.resolve("kubelet.sock"), (request, answer) -> arrived.countDown());
    try (DevicePluginHost host = legacyHost(dir).listener(listener).start()) {
      assertThat(arrived.await(10, TimeUnit.SECONDS)).isTrue();
      kubelet.close();
      await()
          .atMost(WAIT)
          .until(
              () -> host.status(RESOURCE).lastError().orElse(""),
              e -> e.startsWith("waiting for the kubelet: "));
      assertThat(listener.errors).noneMatch(RegistrationException.class::isInstance);
      assertThat(listener.errors).isEmpty();
      assertThat(host.isReady()).isFalse();
    } finally {
      kubelet.close();
    }
  }

  /**
   * Stream checks scheduled earlier used to catch the moment between a cancelled stream (or a
   * registration) and the kubelet's next ListAndWatch, and register again for nothing.
   */
  @Test
  void rapidStreamCancelsAndRestartsCauseNoExtraRegistrations() {
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
        DevicePluginHost host =
            legacyHost(kubelet.pluginDir())
                .reRegistrationDelays(Duration.ofSeconds(2), Duration.ofSeconds(10))
                .start()) {
      kubelet.awaitRegistration(RESOURCE, WAIT);
      await().atMost(WAIT).until(host::isReady);
      for (int i = 0; i < 300; i++) {
        Mark t = kubelet.mark();
        kubelet.cancelListAndWatch(RESOURCE);
        kubelet.awaitEvent(
            t,
            e -> e.kind() == io.github.deviceplugin4j.testkit.KubeletEvent.Kind.LIST_AND_WATCH,
            WAIT);
      }
      int restarts = 40;
      for (int i = 0; i < restarts; i++) {
        Mark served = kubelet.restart();
        kubelet.awaitRegistration(RESOURCE, served, WAIT);
        int expected = i + 2;
        await().atMost(WAIT).until(() -> host.status(RESOURCE).registrations() >= expected);
      }
      await().atMost(WAIT).until(() -> host.openStreams(RESOURCE) == 1);
      // Give any stale check the time to fire: 2.5 grace periods with a stream open all along.
      // (The grace is 2 s: on a loaded 2-core machine the kubelet's own re-open of a cancelled
      // stream took over 30 ms, and once over 150 ms, the grace this test had, and the plugin's
      // re-registration after it was then legitimate: 42 registrations instead of 41.)
      await()
          .during(Duration.ofMillis(5000))
          .atMost(WAIT)
          .until(() -> host.openStreams(RESOURCE) == 1);
      assertThat(host.status(RESOURCE).registrations()).isEqualTo(1 + restarts);
      assertThat(kubelet.registrations()).hasSize(1 + restarts);
    }
  }

  /**
   * When the watched directory comes back (or events overflowed), a kubelet.sock there is handled
   * like a new one. Here the directory is moved away (the attempt to serve again fails: backoff 4
   * s) and moved back with the plugin's socket and kubelet.sock in it: the plugin used to wait for
   * its backoff, since its own socket looked fine to the safety check.
   */
  @Test
  void whenThePluginDirectoryComesBackTheRegistrationDoesNotWaitForTheBackoff() throws Exception {
    Path dir = tmp.resolve("dp");
    RecordingListener listener = new RecordingListener();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            legacyHost(dir)
                .safetyCheckInterval(Duration.ofMillis(200))
                .registrationBackoff(Duration.ofSeconds(4), Duration.ofSeconds(4))
                .listener(listener)
                .start()) {
      kubelet.awaitRegistration(RESOURCE, WAIT);
      await().atMost(WAIT).until(host::isReady);
      Path away = tmp.resolve("away");
      Files.move(dir, away, StandardCopyOption.ATOMIC_MOVE);
      await().atMost(WAIT).until(() -> !listener.errors.isEmpty()); // failed: backoff 4 s
      Mark back = kubelet.mark();
      Files.move(away, dir, StandardCopyOption.ATOMIC_MOVE);
      kubelet.awaitRegistration(RESOURCE, back, WAIT);
      long ms = (System.nanoTime() - back.nanos()) / 1_000_000;
      // Bound: registered by the directory's events, before the failed attempt's 4 s backoff would
      // have retried; a loaded runner adds at most a few hundred ms to an event-driven
      // registration.
      assertThat(ms).as("ms to register after the directory came back").isLessThan(3500);
      await().atMost(WAIT).until(host::isReady);
    }
  }

  /**
   * Two instances starting at once on one directory: the loser used to replace the winner. Now
   * exactly one holds the serving lease and the resource's socket; the other serves its own socket
   * (a handover in waiting) and neither replaces the other's file.
   */
  @Test
  void twoInstancesStartingTogether_exactlyOneHoldsTheResourceSocket() throws Exception {
    // Two threads of its own: with CompletableFuture's default executor, on JDK 25 and 2 cores,
    // the second start never reached the barrier the first one waited at (10 s timeout).
    ExecutorService starters = Executors.newFixedThreadPool(2);
    try {
      startTogether(starters);
    } finally {
      starters.shutdownNow();
    }
  }

  private void startTogether(ExecutorService starters) throws Exception {
    for (int round = 0; round < 20; round++) {
      Path dir = Files.createDirectories(tmp.resolve("r" + round));
      CyclicBarrier barrier = new CyclicBarrier(2);
      List<CompletableFuture<DevicePluginHost>> starts =
          IntStream.range(0, 2)
              .mapToObj(
                  i ->
                      CompletableFuture.supplyAsync(
                          () -> {
                            try {
                              barrier.await(10, TimeUnit.SECONDS);
                            } catch (Exception e) {
                              throw new IllegalStateException(e);
                            }
                            return DevicePluginHost.builder()
                                .pluginDir(dir)
                                .registrationMode(RegistrationMode.LEGACY)
                                .backend(TestBackend.of(RESOURCE, "d" + i))
                                .start();
                          },
                          starters))
              .toList();
      List<DevicePluginHost> hosts = new ArrayList<>();
      for (CompletableFuture<DevicePluginHost> f : starts) {
        hosts.add(f.get(30, TimeUnit.SECONDS));
      }
      try {
        Path canonical = dir.resolve("example.com_dev.sock");
        List<Path> sockets = hosts.stream().map(h -> h.status(RESOURCE).socket()).toList();
        assertThat(sockets).as("round %d", round).doesNotHaveDuplicates().contains(canonical);
        for (Path s : sockets) {
          assertThat(SocketFiles.isLive(s)).as("round %d: %s serves", round, s).isTrue();
        }
      } finally {
        for (DevicePluginHost h : hosts) {
          h.close();
        }
      }
    }
  }

  /**
   * An error naming 10,000 IDs used to exceed the 8 KiB a grpc-java client accepts in trailers,
   * which broke the whole connection (the device stream too): now the list is cut and the status
   * arrives.
   */
  @Test
  void errorsNamingThousandsOfIdsStayBoundedAndTheStreamSurvives() {
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
        DevicePluginHost host = legacyHost(kubelet.pluginDir()).start()) {
      kubelet.awaitDevices(RESOURCE, l -> l.size() == 1, WAIT);
      String[] ids = IntStream.range(0, 10_000).mapToObj(i -> "x" + i).toArray(String[]::new);
      AllocationException e =
          org.assertj.core.api.Assertions.catchThrowableOfType(
              AllocationException.class, () -> kubelet.allocate(RESOURCE, ids));
      assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(e.description()).contains("\"x19\", ... and 9980 more]").hasSizeLessThan(1000);
      String huge = "H".repeat(100_000);
      AllocationException h =
          org.assertj.core.api.Assertions.catchThrowableOfType(
              AllocationException.class, () -> kubelet.allocate(RESOURCE, huge));
      assertThat(h.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(h.description()).contains("...(100000 chars)");
      assertThat(kubelet.allocate(RESOURCE, "d0").deviceIds()).containsExactly("d0");
      assertThat(kubelet.registrations()).hasSize(1);
      assertThat(host.openStreams(RESOURCE)).isEqualTo(1);
    }
  }

  /** Any description is cut to fit a gRPC status, e.g. a backend's huge exception message. */
  @Test
  void aHugeBackendMessageIsCutToFitTheStatus() {
    class Huge extends TestBackend implements Allocator {
      Huge() {
        super(RESOURCE, List.of(Device.healthy("d0")));
      }

      @Override
      public ContainerAllocation allocate(AllocationRequest request) {
        throw new IllegalStateException("é".repeat(50_000));
      }
    }
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(kubelet.pluginDir())
                .registrationMode(RegistrationMode.LEGACY)
                .backend(new Huge())
                .start()) {
      kubelet.awaitDevices(RESOURCE, l -> l.size() == 1, WAIT);
      AllocationException e =
          org.assertj.core.api.Assertions.catchThrowableOfType(
              AllocationException.class, () -> kubelet.allocate(RESOURCE, "d0"));
      assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
      assertThat(e.description())
          .contains("IllegalStateException: éé")
          .endsWith("characters in all)");
      assertThat(kubelet.registrations()).hasSize(1);
      assertThat(host.openStreams(RESOURCE)).isEqualTo(1);
    }
  }

  /**
   * Waiting for the kubelet after failures of another kind (kubelet.sock was a regular file) used
   * to log "still waiting ... after 5623 s" at once: the start of the wait was never set.
   */
  @Test
  void waitingForTheKubeletAfterOtherFailuresLogsFromTheStartOfTheWait() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("dp"));
    Path kubeletSock = dir.resolve("kubelet.sock");
    Files.writeString(kubeletSock, "not a socket");
    RecordingListener listener = new RecordingListener();
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    java.io.PrintStream original = System.err;
    System.setErr(
        new java.io.PrintStream(
            new java.io.OutputStream() {
              @Override
              public synchronized void write(int b) {
                original.write(b);
                captured.write(b);
              }

              @Override
              public synchronized void write(byte[] b, int off, int len) {
                original.write(b, off, len);
                captured.write(b, off, len);
              }
            },
            true,
            StandardCharsets.UTF_8));
    try (DevicePluginHost host =
        legacyHost(dir)
            .registrationBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .listener(listener)
            .start()) {
      await().atMost(WAIT).until(() -> listener.errors.size() >= 2); // cannot reach the kubelet
      Files.delete(kubeletSock); // from now on: waiting for the kubelet
      await()
          .atMost(WAIT)
          .until(
              () -> captured.toString(StandardCharsets.UTF_8).contains("waiting for the kubelet"));
      assertThat(host.isReady()).isFalse();
    } finally {
      System.setErr(original);
    }
    assertThat(captured.toString(StandardCharsets.UTF_8))
        .contains(RESOURCE + ": waiting for the kubelet")
        .doesNotContain("still waiting");
  }

  /** A host serving {@link #RESOURCE} with one device, registering in legacy mode. */
  private static DevicePluginHost.Builder legacyHost(Path pluginDir) {
    return DevicePluginHost.builder()
        .pluginDir(pluginDir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(TestBackend.of(RESOURCE, "d0"));
  }

  /** File work a scripted Register does. */
  @FunctionalInterface
  private interface FileAction {
    void run() throws IOException;
  }

  /**
   * Runs an action on the first Register call only; when it fails, that call fails with its error.
   *
   * @return whether the call goes on
   */
  private static boolean onFirstCall(
      AtomicInteger calls, StreamObserver<Empty> answer, FileAction action) {
    if (calls.incrementAndGet() == 1) {
      try {
        action.run();
      } catch (IOException e) {
        answer.onError(e);
        return false;
      }
    }
    return true;
  }

  /** A kubelet.sock whose Register does what the test says. */
  private static final class ScriptedKubelet implements AutoCloseable {
    private final EventLoopGroup group =
        new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Server server;
    private final Path path;

    ScriptedKubelet(Path path, BiConsumer<RegisterRequest, StreamObserver<Empty>> register)
        throws IOException {
      this.path = path;
      server =
          NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(path))
              .channelType(NioServerDomainSocketChannel.class)
              .bossEventLoopGroup(group)
              .workerEventLoopGroup(group)
              .withChildOption(io.netty.channel.ChannelOption.SO_KEEPALIVE, null)
              .addService(
                  new RegistrationGrpc.RegistrationImplBase() {
                    @Override
                    public void register(RegisterRequest request, StreamObserver<Empty> answer) {
                      register.accept(request, answer);
                    }
                  })
              .build()
              .start();
    }

    @Override
    public void close() throws IOException {
      if (!server.isShutdown()) {
        server.shutdownNow();
        try {
          server.awaitTermination(5, TimeUnit.SECONDS);
          group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(path);
      }
    }
  }
}
