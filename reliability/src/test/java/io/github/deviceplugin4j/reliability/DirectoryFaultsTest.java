package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.registration.DirectoryWatcher;
import io.github.deviceplugin4j.reliability.ProcessProbe.Usage;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults of the plugin directory: deleted and re-created; {@code kubelet.sock} replaced by a
 * regular file and later by a real kubelet again; inotify overflow while the kubelet restarts. The
 * host keeps its defaults (safety check every 5 s, backoff 10 ms to 10 s).
 */
class DirectoryFaultsTest {

  static final String RESOURCE = "example.com/dirs";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration STEP = Duration.ofSeconds(60);
  static final int CREATORS = 8;

  @TempDir Path tmp;

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void pluginDirDeletedAndRecreated_registersWithTheNewKubelet() throws Exception {
    Path dir = tmp.resolve("dp");
    RecordingListener listener = new RecordingListener();
    FakeKubelet first = FakeKubelet.start(dir);
    try (DevicePluginHost host = legacyHost(dir, listener)) {
      first.awaitRegistration(RESOURCE, STEP);
      deleteTree(dir);
      Instant deleted = Instant.now();
      await().atMost(STEP).until(() -> !host.isReady());
      double lostMs = Duration.between(deleted, Instant.now()).toNanos() / 1e6;
      first.close();
      // Away for a second, as during a node's kubelet reset: registration attempts back off.
      await().during(Duration.ofSeconds(1)).atMost(STEP).until(() -> !Files.exists(dir));
      try (FakeKubelet second = FakeKubelet.start(dir)) {
        Instant appeared = startTime(second);
        Registration r = second.awaitRegistration(RESOURCE, Duration.ofSeconds(30));
        second.awaitDevices(RESOURCE, l -> l.size() == 2, STEP);
        double ms = Duration.between(appeared, r.at()).toNanos() / 1e6;
        Figures.print(
            String.format(
                "plugin-dir-deleted notReadyAfter=%.1fms away=1s registeredAfterNewKubelet=%.1fms"
                    + " socketBack=%s",
                lostMs, ms, Files.exists(host.status(RESOURCE).socket())));
        // Bound: one safety-check period plus the backoff step reached after ~1 s of failures.
        assertThat(ms).isLessThan(7_000.0);
      }
    } finally {
      first.close();
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void kubeletSockReplacedByRegularFile_keepsServing_thenRegistersWithRealKubelet()
      throws Exception {
    Path dir = tmp.resolve("dp");
    RecordingListener listener = new RecordingListener();
    FakeKubelet first = FakeKubelet.start(dir);
    try (DevicePluginHost host = legacyHost(dir, listener)) {
      first.awaitRegistration(RESOURCE, STEP);
      first.close();
      Path kubeletSock = dir.resolve(FakeKubelet.KUBELET_SOCKET);
      Files.writeString(kubeletSock, "not a socket");
      int errorsBefore = listener.errors.size();
      Usage early;
      Usage late;
      try (RawClient client = RawClient.connect(host.status(RESOURCE).socket())) {
        await().atMost(STEP).until(() -> listener.errors.size() > errorsBefore);
        early = Usage.now();
        await()
            .during(Duration.ofSeconds(2))
            .atMost(STEP)
            .until(
                () ->
                    !host.isReady()
                        && client.blocking().getDevicePluginOptions(Empty.getDefaultInstance())
                            != null);
        late = Usage.now();
      }
      String error = host.status(RESOURCE).lastError().orElse("");
      int attempts = listener.errors.size() - errorsBefore;
      Files.delete(kubeletSock);
      try (FakeKubelet second = FakeKubelet.start(dir)) {
        Instant appeared = startTime(second);
        Registration r = second.awaitRegistration(RESOURCE, STEP);
        double ms = Duration.between(appeared, r.at()).toNanos() / 1e6;
        Figures.print(
            String.format(
                "kubelet-sock-not-a-socket failedAttempts=%d in 2s fds %d->%d threads %d->%d"
                    + " registeredAfterRealKubelet=%.1fms",
                attempts, early.fds(), late.fds(), early.threads(), late.threads(), ms));
        assertThat(error).contains("cannot reach the kubelet at " + kubeletSock);
        // Sampled while attempts go on: an attempt's connection (socket, pipe) or a worker may be
        // alive then; a leak per attempt would add one per failed attempt. The registration follows
        // the new kubelet.sock's event, not the backoff (up to 10 s).
        assertThat(late.fds()).isLessThanOrEqualTo(early.fds() + 8);
        assertThat(late.threads()).isLessThanOrEqualTo(early.threads() + 8);
        assertThat(ms).isLessThan(5000.0);
      }
    } finally {
      first.close();
    }
  }

  /**
   * The directory watcher itself, made to overflow for sure: its listener blocks on the first event
   * while 2,000 files are created, so more than the JDK's 512 pending events pile up and are
   * replaced by one OVERFLOW event; the watcher must then ask for a rescan.
   */
  @Test
  @Timeout(value = 1, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void watcherOverflow_leadsToARescan() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("w"));
    CountDownLatch firstEvent = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger created = new AtomicInteger();
    AtomicLong rescanAt = new AtomicLong();
    DirectoryWatcher.Listener listener =
        new DirectoryWatcher.Listener() {
          @Override
          public void created(Path d, String name) {
            created.incrementAndGet();
            firstEvent.countDown();
            try {
              release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }

          @Override
          public void deleted(Path d, String name) {}

          @Override
          public void rescan(Path d) {
            rescanAt.compareAndSet(0, System.nanoTime());
          }
        };
    int files = 2000;
    try (DirectoryWatcher watcher =
        new DirectoryWatcher(List.of(dir), listener, Duration.ofSeconds(10))) {
      assertThat(watcher.isWatching(dir)).isTrue();
      Files.createFile(dir.resolve("first"));
      assertThat(firstEvent.await(STEP.toSeconds(), TimeUnit.SECONDS)).isTrue();
      for (int i = 0; i < files; i++) {
        Files.createFile(dir.resolve("f" + i));
      }
      long released = System.nanoTime();
      release.countDown();
      await().atMost(STEP).until(() -> rescanAt.get() != 0);
      double ms = (rescanAt.get() - released) / 1e6;
      Figures.print(
          String.format(
              "inotify-overflow watcher files=%d eventsDelivered=%d rescanAfterRelease=%.1fms",
              files, created.get(), ms));
      assertThat(created.get()).as("events delivered one by one").isLessThan(files);
    }
  }

  /**
   * A burst of files in the plugin directory with a kubelet restart in the middle of it: whether
   * the events overflow or not (the figure says which), the plugin must register again promptly; an
   * overflow is recovered through the rescan, i.e. the safety check.
   */
  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void fileBurstWithKubeletRestart_registersAgain() throws Exception {
    Path dir = tmp.resolve("dp");
    int files = 24_000;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream originalErr = System.err;
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host = legacyHost(dir, new RecordingListener())) {
      kubelet.awaitRegistration(RESOURCE, STEP);
      await().atMost(STEP).until(host::isReady);
      System.setErr(new PrintStream(new Tee(originalErr, log), true, StandardCharsets.UTF_8));
      CountDownLatch halfway = new CountDownLatch(CREATORS);
      List<Thread> creators = new java.util.ArrayList<>();
      for (int t = 0; t < CREATORS; t++) {
        int id = t;
        Thread creator =
            new Thread(
                () -> {
                  for (int i = 0; i < files / CREATORS; i++) {
                    try {
                      Files.createFile(dir.resolve("burst" + id + "-" + i));
                    } catch (IOException e) {
                      throw new UncheckedIOException(e);
                    }
                    if (i == files / CREATORS / 4) {
                      halfway.countDown();
                    }
                  }
                },
                "burst-" + t);
        creator.start();
        creators.add(creator);
      }
      assertThat(halfway.await(10, TimeUnit.SECONDS)).isTrue();
      Mark served = kubelet.restart();
      Registration r = kubelet.awaitRegistration(RESOURCE, served, Duration.ofSeconds(20));
      for (Thread creator : creators) {
        creator.join(TimeUnit.SECONDS.toMillis(30));
      }
      await().atMost(STEP).until(host::isReady);
      double ms =
          (r.nanos()
                  - kubelet
                      .awaitEvent(
                          served,
                          e ->
                              e.kind() == KubeletEvent.Kind.RESTART
                                  && e.outcome() == KubeletEvent.Outcome.OK,
                          STEP)
                      .nanos())
              / 1e6;
      boolean overflow = log.toString(StandardCharsets.UTF_8).contains("watch overflow in " + dir);
      Figures.print(
          String.format(
              "inotify-burst files=%d restartWithinBurst overflowSeen=%s reRegisteredAfter=%.1fms",
              files, overflow, ms));
      // A missed event is caught by the next safety check (every 5 s).
      assertThat(ms).isLessThan(6_000.0);
    } finally {
      System.setErr(originalErr);
    }
  }

  private static DevicePluginHost legacyHost(Path dir, RecordingListener listener) {
    return DevicePluginHost.builder()
        .pluginDir(dir)
        .registrationMode(RegistrationMode.LEGACY)
        .backend(ScriptedBackend.healthy(RESOURCE, 2))
        .listener(listener)
        .start();
  }

  private static Instant startTime(FakeKubelet kubelet) {
    return kubelet.events().stream()
        .filter(e -> e.kind() == KubeletEvent.Kind.START)
        .findFirst()
        .orElseThrow()
        .time();
  }

  /**
   * Deletes a directory tree that a running plugin may be writing into, as {@code rm -rf} does: a
   * walk can miss what the plugin creates meanwhile (its standby server's private directory, bound
   * 100 ms after it serves), so the walk is repeated until the root is gone.
   */
  static void deleteTree(Path root) throws IOException {
    for (int attempt = 1; Files.exists(root, LinkOption.NOFOLLOW_LINKS); attempt++) {
      try (Stream<Path> s = Files.walk(root)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      } catch (DirectoryNotEmptyException | NoSuchFileException | UncheckedIOException e) {
        if (attempt == 20) {
          throw e;
        }
      }
    }
  }

  /** Copies what is written to two streams. */
  private static final class Tee extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    Tee(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public synchronized void write(int c) throws IOException {
      a.write(c);
      b.write(c);
    }

    @Override
    public synchronized void write(byte[] buf, int off, int len) throws IOException {
      a.write(buf, off, len);
      b.write(buf, off, len);
    }

    @Override
    public void flush() throws IOException {
      a.flush();
      b.flush();
    }
  }
}
