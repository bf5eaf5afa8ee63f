package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Startup, sockets and configuration checks; no kubelet involved. */
class HostStartupTest {

  private static final String RESOURCE = "example.com/dev";

  @TempDir Path dir;

  private final List<DevicePluginHost> hosts = new ArrayList<>();

  @AfterEach
  void closeHosts() {
    hosts.forEach(DevicePluginHost::close);
    TestSupport.awaitNoCoreThreads();
  }

  private DevicePluginHost.Builder builder(DeviceBackend... backends) {
    DevicePluginHost.Builder b =
        DevicePluginHost.builder()
            .pluginDir(dir)
            .registryDir(dir.resolve("no-registry"))
            .registrationMode(RegistrationMode.LEGACY);
    for (DeviceBackend backend : backends) {
      b.backend(backend);
    }
    return b;
  }

  private DevicePluginHost start(DevicePluginHost.Builder b) {
    DevicePluginHost host = b.start();
    hosts.add(host);
    return host;
  }

  @Test
  void servesItsSocketWithMode0600BeforeAnyKubeletExists() throws IOException {
    DevicePluginHost host = start(builder(TestBackend.of(RESOURCE, "d0")));
    Path socket = dir.resolve("example.com_dev.sock");
    assertThat(host.status(RESOURCE).socket()).isEqualTo(socket);
    assertThat(TestSupport.isSocket(socket)).isTrue();
    assertThat(TestSupport.permissions(socket)).isEqualTo("rw-------");
    assertThat(SocketFiles.isLive(socket)).isTrue();
    ResourceStatus status = host.status(RESOURCE);
    assertThat(status.registered()).isFalse();
    assertThat(status.mode()).isEqualTo(RegistrationMode.LEGACY);
    assertThat(status.totalDevices()).isEqualTo(1);
    assertThat(host.isReady()).isFalse();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> host.status(RESOURCE).lastError().orElse(""), e -> e.contains("kubelet.sock"));
    assertThat(host.status(RESOURCE).lastError().orElseThrow())
        .contains("waiting for the kubelet")
        .contains(dir.resolve("kubelet.sock").toString());
  }

  @Test
  void socketPermissionsAreConfigurable() throws IOException {
    DevicePluginHost host =
        start(
            builder(TestBackend.of(RESOURCE, "d0"))
                .socketPermissions(PosixFilePermissions.fromString("rw-rw----")));
    assertThat(TestSupport.permissions(host.status(RESOURCE).socket())).isEqualTo("rw-rw----");
  }

  @Test
  void theSocketNeverAppearsWithLooserPermissions() throws Exception {
    // Every file the plugin creates in the directory is either its socket, already 0600 when it
    // appears (it is renamed into place), or a private directory without group/other access.
    try (WatchService ws = FileSystems.getDefault().newWatchService()) {
      dir.register(ws, StandardWatchEventKinds.ENTRY_CREATE);
      List<String> seen = new ArrayList<>();
      for (int i = 0; i < 15; i++) {
        DevicePluginHost host = builder(TestBackend.of(RESOURCE, "d0")).start();
        WatchKey key;
        while ((key = ws.poll(200, TimeUnit.MILLISECONDS)) != null) {
          for (WatchEvent<?> e : key.pollEvents()) {
            Path p = dir.resolve(String.valueOf(e.context()));
            String perms;
            try {
              perms =
                  PosixFilePermissions.toString(
                      Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
            } catch (IOException gone) {
              continue; // the private directory is removed right after the rename
            }
            seen.add(p.getFileName() + " " + perms);
            if (p.getFileName().toString().equals("example.com_dev.sock")) {
              assertThat(perms).isEqualTo("rw-------");
            } else {
              assertThat(p.getFileName().toString()).startsWith(".");
              assertThat(Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).isTrue();
              assertThat(perms).endsWith("------");
            }
          }
          key.reset();
        }
        host.close();
      }
      assertThat(seen).contains("example.com_dev.sock rw-------");
    }
  }

  @Test
  void replacesAStaleSocketOfADeadInstance() throws IOException {
    Path socket = dir.resolve("example.com_dev.sock");
    try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      dead.bind(UnixDomainSocketAddress.of(socket));
    }
    assertThat(TestSupport.isSocket(socket)).isTrue();
    assertThat(SocketFiles.isLive(socket)).isFalse();

    start(builder(TestBackend.of(RESOURCE, "d0")));

    assertThat(SocketFiles.isLive(socket)).isTrue();
    assertThat(TestSupport.permissions(socket)).isEqualTo("rw-------");
  }

  /**
   * A live socket at the resource's path whose server holds no serving lease (another program, or
   * an instance of an SDK without handover) is never replaced: a clear startup error.
   */
  @Test
  void aLiveSocketOfAProcessWithoutTheLeaseIsAClearStartupError() throws IOException {
    Path socket = dir.resolve("example.com_dev.sock");
    try (ServerSocketChannel live = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      live.bind(UnixDomainSocketAddress.of(socket));
      Object inode = Files.readAttributes(socket, "unix:ino").get("ino");

      assertThatThrownBy(() -> builder(TestBackend.of(RESOURCE, "d0")).start())
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("another live process is serving " + socket)
          .hasMessageNotContaining("Address already in use");

      assertThat(Files.readAttributes(socket, "unix:ino").get("ino")).isEqualTo(inode);
      assertThat(SocketFiles.isLive(socket)).isTrue();
    }
  }

  @Test
  void aFileThatIsNotASocketIsNotOverwritten() throws IOException {
    Path taken = dir.resolve("example.com_dev.sock");
    Files.writeString(taken, "precious");
    assertThatThrownBy(() -> builder(TestBackend.of(RESOURCE, "d0")).start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(taken + " exists and is not a socket");
    assertThat(Files.readString(taken)).isEqualTo("precious");
  }

  @Test
  void configurationProblemsAreReportedTogetherAndClearly() {
    assertThatThrownBy(
            () ->
                DevicePluginHost.builder()
                    .pluginDir(dir.resolve("missing"))
                    .registrationMode(RegistrationMode.LEGACY)
                    .backend(TestBackend.of("no-domain", "d0"))
                    .backend(TestBackend.of("example.com/a", "d0"))
                    .backend(TestBackend.of("example.com/a", "d0"))
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("invalid resource name \"no-domain\"")
        .hasMessageContaining("must contain '/'")
        .hasMessageContaining("resource \"example.com/a\" is served by more than one backend")
        .hasMessageContaining("plugin directory " + dir.resolve("missing") + " does not exist")
        .hasMessageContaining("DEVICE_PLUGIN_DIR");
    assertThat(TestSupport.coreThreads()).isEmpty();
  }

  @Test
  void noBackendIsAnError() {
    assertThatThrownBy(() -> builder().start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("no backend");
  }

  @Test
  void aPluginDirectoryThatIsAFileIsAnError() throws IOException {
    Path file = Files.writeString(dir.resolve("file"), "");
    assertThatThrownBy(
            () ->
                DevicePluginHost.builder()
                    .pluginDir(file)
                    .registrationMode(RegistrationMode.LEGACY)
                    .backend(TestBackend.of(RESOURCE, "d0"))
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(file + " does not exist or is not a directory");
  }

  @Test
  void aSocketPathOverTheUnixLimitIsAnError() throws IOException {
    Path deep = Files.createDirectories(dir.resolve("d".repeat(60)));
    String name = "example.com/" + "n".repeat(40);
    assertThatThrownBy(
            () ->
                DevicePluginHost.builder()
                    .pluginDir(deep)
                    .registrationMode(RegistrationMode.LEGACY)
                    .backend(TestBackend.of(name, "d0"))
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("Unix sockets allow at most 107");
  }

  @Test
  void anExplicitPluginWatcherModeNeedsTheRegistryDirectory() {
    assertThatThrownBy(
            () ->
                builder(TestBackend.of(RESOURCE, "d0"))
                    .registrationMode(RegistrationMode.PLUGIN_WATCHER)
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("plugins registry directory " + dir.resolve("no-registry"))
        .hasMessageContaining("PLUGINS_REGISTRY_DIR");
  }

  @Test
  void autoModeUsesThePluginWatcherWhenTheRegistryDirectoryExists() throws IOException {
    Path registry = Files.createDirectory(dir.resolve("reg"));
    DevicePluginHost watcher =
        start(
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registryDir(registry)
                .backend(TestBackend.of("example.com/w", "d0")));
    assertThat(watcher.registrationMode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
    assertThat(watcher.status("example.com/w").socket())
        .isEqualTo(registry.resolve("example.com_w.sock"));

    DevicePluginHost legacy =
        start(
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registryDir(dir.resolve("absent"))
                .backend(TestBackend.of("example.com/l", "d0")));
    assertThat(legacy.registrationMode()).isEqualTo(RegistrationMode.LEGACY);
    assertThat(legacy.status("example.com/l").socket())
        .isEqualTo(dir.resolve("example.com_l.sock"));
  }

  @Test
  void environmentVariablesApplyWhenTheBuilderDoesNotSetThePaths() throws IOException {
    Path registry = Files.createDirectory(dir.resolve("reg"));
    DevicePluginHost host =
        start(
            DevicePluginHost.builder()
                .environment(
                    Map.of(
                        "DEVICE_PLUGIN_DIR", dir.toString(),
                        "PLUGINS_REGISTRY_DIR", registry.toString()))
                .backend(TestBackend.of(RESOURCE, "d0")));
    assertThat(host.registrationMode()).isEqualTo(RegistrationMode.PLUGIN_WATCHER);
    assertThat(host.status(RESOURCE).socket()).isEqualTo(registry.resolve("example.com_dev.sock"));

    Path other = Files.createDirectory(dir.resolve("explicit"));
    DevicePluginHost explicit =
        start(
            DevicePluginHost.builder()
                .environment(Map.of("DEVICE_PLUGIN_DIR", dir.toString()))
                .pluginDir(other)
                .registryDir(dir.resolve("absent"))
                .backend(TestBackend.of("example.com/other", "d0")));
    assertThat(explicit.status("example.com/other").socket())
        .isEqualTo(other.resolve("example.com_other.sock"));
  }

  @Test
  void closeRemovesEverySocketAndStopsEveryThread() throws IOException {
    TestBackend a = TestBackend.of("example.com/a", "d0");
    TestBackend b = TestBackend.of("example.com/b", "d0");
    java.util.Set<String> baseline = TestSupport.liveThreads();
    DevicePluginHost host = builder(a, b).start();
    assertThat(TestSupport.sockets(dir))
        .containsExactly(dir.resolve("example.com_a.sock"), dir.resolve("example.com_b.sock"));
    assertThat(TestSupport.coreThreads()).isNotEmpty();
    assertThat(a.lifecycle).containsExactly("start");

    host.close();
    host.close(); // idempotent

    assertThat(TestSupport.sockets(dir)).isEmpty();
    assertThat(a.lifecycle).containsExactly("start", "stop");
    assertThat(b.lifecycle).containsExactly("start", "stop");
    TestSupport.awaitNoCoreThreads();
    System.out.println(
        "THREADS AFTER CLOSE: "
            + Thread.getAllStackTraces().keySet().stream().map(Thread::getName).sorted().toList());
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".dp4j"));
    }
  }

  @Test
  void aBackendThatFailsToStartFailsTheStartAndLeavesNothingBehind() throws IOException {
    TestBackend ok = TestBackend.of("example.com/ok", "d0");
    DeviceBackend broken =
        new TestBackend("example.com/broken", List.of()) {
          @Override
          public void start(DeviceSink sink) {
            throw new IllegalStateException("no hardware");
          }
        };
    assertThatThrownBy(() -> builder(ok, broken).start())
        .isInstanceOf(BackendException.class)
        .hasMessageContaining(
            "example.com/broken failed to start: IllegalStateException: no hardware");
    assertThat(TestSupport.sockets(dir)).isEmpty();
    assertThat(ok.lifecycle).containsExactly("start", "stop");
    TestSupport.awaitNoCoreThreads();
  }

  @Test
  void aReadOnlyPluginDirectoryIsAnError() throws IOException {
    org.junit.jupiter.api.Assumptions.assumeFalse(
        "root".equals(System.getProperty("user.name")), "root may write anywhere");
    Path readOnly = Files.createDirectory(dir.resolve("ro"));
    Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("r-x------"));
    assertThatThrownBy(
            () ->
                DevicePluginHost.builder()
                    .pluginDir(readOnly)
                    .registrationMode(RegistrationMode.LEGACY)
                    .backend(TestBackend.of(RESOURCE, "d0"))
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(readOnly + " is not writable");
  }

  @Test
  void runBlocksUntilInterruptedAndThenCleansUp() throws Exception {
    java.util.Set<String> baseline = TestSupport.liveThreads();
    Path socket = dir.resolve("example.com_dev.sock");
    java.util.concurrent.atomic.AtomicReference<Throwable> failure =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread main =
        new Thread(
            () -> {
              try {
                builder(TestBackend.of(RESOURCE, "d0")).run();
              } catch (Throwable t) {
                failure.set(t);
              }
            },
            "test-main");
    main.start();
    await().atMost(Duration.ofSeconds(60)).until(() -> SocketFiles.isLive(socket));
    assertThat(main.isAlive()).isTrue();
    main.interrupt();
    main.join(10_000);
    assertThat(main.isAlive()).isFalse();
    assertThat(failure.get()).isNull();
    assertThat(Files.exists(socket)).isFalse();
    TestSupport.awaitOnlyThreads(baseline);
  }

  @Test
  void aBackendWhoseFirstDeviceListFailsStillServesAnEmptyList() {
    DeviceBackend failing =
        new TestBackend(RESOURCE, List.of()) {
          @Override
          public List<Device> devices() {
            throw new IllegalStateException("sysfs unreadable");
          }
        };
    DevicePluginHost host = start(builder(failing));
    assertThat(host.status(RESOURCE).totalDevices()).isZero();
    assertThat(host.status(RESOURCE).lastError()).isPresent();
  }
}
