package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security properties: sockets never exist with group or other permissions, not even for an
 * instant; no TCP listener anywhere; nothing the kubelet sends makes the plugin write outside its
 * directories or start a process.
 */
class SecurityTest {

  static final String RESOURCE = "example.com/sec";
  static final String MARKER = "dp4jpwn";

  @TempDir Path tmp;

  /**
   * A scanner thread stats every entry of the plugin and registry directories in a tight loop while
   * hosts start, re-serve after kubelet restarts and stop, many times, in both registration modes.
   * Sockets are created in a private 0700 directory, chmod-ed there and renamed into place; the
   * scanner must never see a socket or a private directory in the shared directories with a group
   * or other permission bit. A socket bound with the default umask is flagged (the check can fail).
   */
  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void socketsNeverHaveGroupOrOtherPermissions() throws Exception {
    Path dir = tmp.resolve("dp");
    Path registry = Files.createDirectories(tmp.resolve("reg"));
    Scanner scanner = new Scanner(List.of(dir, registry));
    int cycles = Sizes.socketCycles();
    try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir).registryDir(registry).start()) {
      // The detector works: a socket bound with the process umask (022) is world-readable.
      Path probe = dir.resolve("probe.sock");
      try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
        ch.bind(UnixDomainSocketAddress.of(probe));
        assertThat(scanner.scanOnce()).anyMatch(v -> v.contains("probe.sock"));
      } finally {
        Files.deleteIfExists(probe);
      }
      scanner.violations.clear();
      scanner.modes.clear();
      scanner.start();
      for (int i = 0; i < cycles; i++) {
        RegistrationMode mode =
            i % 2 == 0 ? RegistrationMode.LEGACY : RegistrationMode.PLUGIN_WATCHER;
        try (DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registryDir(registry)
                .registrationMode(mode)
                .backend(ScriptedBackend.healthy(RESOURCE, 1))
                .backend(ScriptedBackend.healthy(RESOURCE + "2", 1))
                .start()) {
          assertThat(host.status()).hasSize(2);
          kubelet.awaitRegistration(RESOURCE + "2", Duration.ofSeconds(60));
          Mark served = kubelet.restart(); // legacy: sockets deleted, served again
          kubelet.awaitRegistration(RESOURCE, served, Duration.ofSeconds(60));
        }
      }
      scanner.stop();
    }
    Figures.print(
        String.format(
            "socket-permissions cycles=%d scans=%d socketsSeen=%d privateDirsSeen=%d"
                + " bindSocketsSeenInPrivateDirs=%d modesSeen=%s violations=%d",
            cycles,
            scanner.scans.get(),
            scanner.sockets.get(),
            scanner.privateDirs.get(),
            scanner.privateSockets.get(),
            scanner.modes,
            scanner.violations.size()));
    assertThat(scanner.violations).as("entries with group/other permissions").isEmpty();
    assertThat(scanner.sockets.get()).as("plugin sockets observed").isPositive();
  }

  /**
   * No TCP listener: the fake kubelet (with PodResources and the plugin watcher) and every example
   * backend in one host, registered and allocating; the process's LISTEN sockets in {@code
   * /proc/self/net/tcp*} (matched to its own descriptors) must be none. A loopback ServerSocket is
   * detected (the check can fail).
   */
  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void noTcpListenerWhileHostAndExamplesRun() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      assertThat(ProcessProbe.tcpListeners())
          .singleElement()
          .asString()
          .contains(String.format(":%04X", s.getLocalPort()));
    }
    assertThat(ProcessProbe.tcpListeners()).isEmpty();
    ExampleNode node = new ExampleNode(Files.createDirectories(tmp.resolve("n")));
    List<String> during;
    int resources;
    try (FakeKubelet kubelet =
            FakeKubelet.builder()
                .pluginDir(tmp.resolve("dp"))
                .podResourcesSocket(tmp.resolve("pr/kubelet.sock"))
                .start();
        DevicePluginHost host = exampleHost(kubelet, node)) {
      resources = host.status().size();
      for (var status : host.status()) {
        kubelet.awaitDevices(status.resourceName(), l -> !l.isEmpty(), Duration.ofSeconds(20));
      }
      kubelet.allocate(ExampleNode.NIC_RESOURCE, 1);
      kubelet.allocate(ExampleNode.IB_RESOURCE, 1);
      kubelet.allocate(ExampleNode.FPGA_RESOURCE, 1);
      during = ProcessProbe.tcpListeners();
    }
    Figures.print(
        "no-tcp-listener in-process resources="
            + resources
            + " fakeKubelet+podResources tcpListeners="
            + during.size()
            + " (example jars: see the sigterm figures)");
    assertThat(during).isEmpty();
  }

  /**
   * What the kubelet sends cannot make the plugin write outside its directories or run anything:
   * Allocate, GetPreferredAllocation and PreStartContainer with IDs holding {@code ../}, absolute
   * paths, NUL and percent-encoded separators, alone and mixed with real IDs, to every example
   * plugin. Allocate refuses every such call with INVALID_ARGUMENT before any backend code runs;
   * GetPreferredAllocation and PreStartContainer, which must not fail for unknown IDs (the kubelet
   * cannot recover), refuse the malformed ones and otherwise answer without handing the payload to
   * backend code as a device (unknown IDs are ignored or listed as unknown); no file named after
   * the payload appears anywhere under /tmp or the work directory; the only files written are the
   * NIC plugin's device-info files for a real allocation; no child process starts.
   */
  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void kubeletInputCannotWriteOutsideOrRunCommands() throws Exception {
    ExampleNode node = new ExampleNode(Files.createDirectories(tmp.resolve("n")));
    List<String> payloads =
        List.of(
            "../../../../../../tmp/" + MARKER + "-a",
            "/tmp/" + MARKER + "-b",
            "..%2f..%2f" + MARKER + "-c",
            MARKER + "-d\u0000/../../x",
            "./" + MARKER + "-e",
            MARKER + "-f/../../../../etc/passwd",
            "0000:3b:02.0/../../" + MARKER + "-g",
            "$(touch /tmp/" + MARKER + "-h)",
            "`touch /tmp/" + MARKER + "-i`");
    Set<String> treeBefore = tree(tmp);
    long childrenBefore = ProcessHandle.current().children().count();
    int calls = 0;
    int refused = 0;
    int allocateCalls = 0;
    int allocateRefused = 0;
    List<Status.Code> otherCodes = new ArrayList<>();
    List<String> written;
    try (FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("dp"));
        DevicePluginHost host = exampleHost(kubelet, node)) {
      for (var status : host.status()) {
        kubelet.awaitDevices(status.resourceName(), l -> !l.isEmpty(), Duration.ofSeconds(20));
        String real = kubelet.devices(status.resourceName()).get(0).id();
        try (RawClient client = RawClient.connect(status.socket())) {
          for (String bad : payloads) {
            for (List<String> ids : List.of(List.of(bad), List.of(real, bad))) {
              for (int rpc = 0; rpc < 3; rpc++) {
                calls++;
                Status.Code code = attack(client, rpc, ids);
                if (code == Status.Code.INVALID_ARGUMENT) {
                  refused++;
                }
                if (rpc == 0) {
                  allocateCalls++;
                  allocateRefused += code == Status.Code.INVALID_ARGUMENT ? 1 : 0;
                } else {
                  otherCodes.add(code);
                }
              }
            }
          }
        }
      }
      Allocation nic = kubelet.allocate(ExampleNode.NIC_RESOURCE, 1);
      written =
          tree(tmp).stream()
              .filter(p -> !treeBefore.contains(p))
              .filter(p -> !p.startsWith(tmp.resolve("dp").toString()))
              .toList();
      assertThat(written)
          .as("files written outside the plugin directory")
          .allMatch(p -> p.startsWith(node.devinfo.toString()))
          .anyMatch(p -> p.contains(nic.deviceIds().get(0)));
    }
    List<String> marked = findMarked(Path.of("/tmp"));
    long childrenAfter = ProcessHandle.current().children().count();
    Figures.print(
        String.format(
            "kubelet-input-paths payloads=%d calls=%d invalidArgument=%d filesNamedAfterPayload=%d"
                + " filesWrittenOutsidePluginDir=%s childProcesses=%d->%d",
            payloads.size(),
            calls,
            refused,
            marked.size(),
            written.stream().map(p -> Path.of(p).getFileName().toString()).toList(),
            childrenBefore,
            childrenAfter));
    assertThat(allocateRefused).isEqualTo(allocateCalls);
    assertThat(otherCodes)
        .as("pre-start and preferred: refused when malformed, else answered")
        .allMatch(c -> c == Status.Code.OK || c == Status.Code.INVALID_ARGUMENT);
    assertThat(marked).isEmpty();
    assertThat(childrenAfter).isEqualTo(childrenBefore);
  }

  private static Status.Code attack(RawClient client, int rpc, List<String> ids) {
    try {
      switch (rpc) {
        case 0 ->
            client
                .blocking()
                .allocate(
                    AllocateRequest.newBuilder()
                        .addContainerRequests(
                            ContainerAllocateRequest.newBuilder().addAllDevicesIds(ids))
                        .build());
        case 1 ->
            client
                .blocking()
                .preStartContainer(
                    PreStartContainerRequest.newBuilder().addAllDevicesIds(ids).build());
        default ->
            client
                .blocking()
                .getPreferredAllocation(
                    PreferredAllocationRequest.newBuilder()
                        .addContainerRequests(
                            ContainerPreferredAllocationRequest.newBuilder()
                                .addAllAvailableDeviceIDs(ids)
                                .addMustIncludeDeviceIDs(ids.get(ids.size() - 1))
                                .setAllocationSize(1))
                        .build());
      }
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  static DevicePluginHost exampleHost(FakeKubelet kubelet, ExampleNode node) {
    DevicePluginHost.Builder b =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY);
    for (DeviceBackend backend : node.backends()) {
      b.backend(backend);
    }
    return b.start();
  }

  /** Every regular file and directory under a root, as absolute path strings. */
  static Set<String> tree(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(p -> !Files.isSymbolicLink(p))
          .map(Path::toString)
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  /** Files and directories whose name holds the marker, anywhere under a root. */
  static List<String> findMarked(Path root) throws IOException {
    List<String> out = new ArrayList<>();
    Files.walkFileTree(
        root,
        new java.nio.file.SimpleFileVisitor<>() {
          @Override
          public java.nio.file.FileVisitResult preVisitDirectory(
              Path dir, java.nio.file.attribute.BasicFileAttributes attrs) {
            check(dir);
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult visitFile(
              Path file, java.nio.file.attribute.BasicFileAttributes attrs) {
            check(file);
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
            // other builds' temporary files come and go during the walk
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          private void check(Path p) {
            if (p.getFileName() != null && p.getFileName().toString().contains(MARKER)) {
              out.add(p.toString());
            }
          }
        });
    return out;
  }

  /** Stats every entry of some directories in a tight loop, flagging group/other permissions. */
  static final class Scanner {
    final List<Path> dirs;
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final Set<String> modes = java.util.Collections.synchronizedSet(new TreeSet<>());
    final AtomicLong scans = new AtomicLong();
    final AtomicLong sockets = new AtomicLong();
    final AtomicLong privateDirs = new AtomicLong();
    final AtomicLong privateSockets = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean();
    private Thread thread;

    Scanner(List<Path> dirs) {
      this.dirs = dirs;
    }

    void start() {
      running.set(true);
      thread =
          new Thread(
              () -> {
                while (running.get()) {
                  scanOnce();
                }
              },
              "permission-scanner");
      thread.start();
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(10_000);
    }

    List<String> scanOnce() {
      List<String> found = new ArrayList<>();
      scans.incrementAndGet();
      for (Path dir : dirs) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
          for (Path p : entries) {
            String name = p.getFileName().toString();
            int mode = mode(p);
            if (mode < 0 || name.equals(FakeKubelet.KUBELET_SOCKET)) {
              continue; // gone already, or the kubelet's own socket
            }
            boolean socket = (mode & 0170000) == 0140000;
            boolean directory = (mode & 0170000) == 0040000;
            if (socket) {
              sockets.incrementAndGet();
              modes.add("sock " + Integer.toOctalString(mode & 0777));
            } else if (directory && name.startsWith(".dp4j")) {
              privateDirs.incrementAndGet();
              modes.add("privdir " + Integer.toOctalString(mode & 0777));
              Path inner = p.resolve(".s");
              int innerMode = mode(inner);
              if (innerMode >= 0) {
                privateSockets.incrementAndGet();
                modes.add("privsock " + Integer.toOctalString(innerMode & 0777));
              }
            } else {
              continue;
            }
            if ((mode & 0077) != 0) {
              String v = p + " mode " + Integer.toOctalString(mode & 0777);
              found.add(v);
              violations.add(v);
            }
          }
        } catch (NoSuchFileException gone) {
          // the directory is being re-created
        } catch (IOException e) {
          violations.add("cannot scan " + dir + ": " + e);
        }
      }
      return found;
    }

    private static int mode(Path p) {
      try {
        Map<String, Object> a = Files.readAttributes(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        return (Integer) a.get("mode");
      } catch (IOException e) {
        return -1;
      }
    }
  }
}
