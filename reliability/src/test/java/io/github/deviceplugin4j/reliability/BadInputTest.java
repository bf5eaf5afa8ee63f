package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.Mount;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input, table-driven: each row is an input and the exact outcome it must get (status code, or
 * exception type, and a fragment of the message). Three areas: what the kubelet (or anything on the
 * socket) sends to Allocate, GetPreferredAllocation and PreStartContainer; what a vendor configures
 * (resource names, directories, socket paths); what a backend publishes or answers. The table with
 * the observed messages is written to {@code target/reliability-bad-input.md}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTest {

  static final String REQ = "example.com/bad";
  static final String OUT = "example.com/published";
  static final String ANS = "example.com/answers";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration STEP = Duration.ofSeconds(60);

  @TempDir static Path tmp;

  FakeKubelet kubelet;
  DevicePluginHost host;
  RawClient req;
  RawClient ans;
  ScriptedBackend.Capable requests;
  ScriptedBackend published;
  ScriptedBackend.Capable answers;
  final Map<String, List<DevicePluginException>> errors = new ConcurrentHashMap<>();
  final AtomicInteger rowIds = new AtomicInteger();
  final List<String> table = new CopyOnWriteArrayList<>();

  /** The outcome of a row: a gRPC status code, an exception type, or OK; and the message. */
  record Outcome(String code, String message) {}

  /** One row of the table. */
  record Row(
      String area,
      String call,
      String input,
      String code,
      String fragment,
      Supplier<Outcome> action) {
    @Override
    public String toString() {
      return area + " | " + call + " | " + input;
    }
  }

  @BeforeAll
  @Timeout(value = 1, unit = TimeUnit.MINUTES)
  void start() {
    kubelet = FakeKubelet.start(tmp.resolve("dp"));
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      devices.add(Device.builder("d" + i).deviceNode(DeviceNode.rw("/dev/d" + i)).build());
    }
    devices.add(Device.builder("u0").health(Health.UNHEALTHY).build());
    devices.add(Device.builder("u1").health(Health.UNHEALTHY).build());
    devices.add(Device.builder("gpu-ü0").env("GPU", "ü0").build());
    requests = new ScriptedBackend.Capable(REQ, devices);
    published = new ScriptedBackend(OUT, List.of(Device.healthy("ok")));
    answers = new ScriptedBackend.Capable(ANS, List.of(Device.healthy("a0")));
    host =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY)
            .backend(requests)
            .backend(published)
            .backend(answers)
            .listener(
                new PluginListener() {
                  @Override
                  public void onError(String resourceName, DevicePluginException error) {
                    errors
                        .computeIfAbsent(resourceName, k -> new CopyOnWriteArrayList<>())
                        .add(error);
                  }
                })
            .start();
    kubelet.awaitDevices(REQ, l -> l.size() == 11, STEP);
    kubelet.awaitDevices(OUT, l -> l.size() == 1, STEP);
    kubelet.awaitDevices(ANS, l -> l.size() == 1, STEP);
    req = RawClient.connect(host.status(REQ).socket());
    ans = RawClient.connect(host.status(ANS).socket());
  }

  @AfterAll
  @Timeout(value = 1, unit = TimeUnit.MINUTES)
  void stop() throws IOException {
    for (AutoCloseable c : new AutoCloseable[] {req, ans, host, kubelet}) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          throw new IllegalStateException("closing " + c, e);
        }
      }
    }
    long passed = table.stream().filter(l -> l.startsWith("| pass")).count();
    Figures.print("bad-input rows=" + table.size() + " passed=" + passed);
    Path file = Path.of("target", "reliability-bad-input.md");
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(
        file,
        "| result | area | call | input | expected | observed |\n|---|---|---|---|---|---|\n"
            + String.join("\n", table)
            + "\n",
        StandardCharsets.UTF_8);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  @Timeout(value = 1, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void row(Row row) {
    Outcome o;
    try {
      o = row.action().get();
    } catch (RuntimeException | AssertionError e) {
      o = new Outcome("test error", String.valueOf(e.getMessage()));
    }
    boolean pass = o.code().equals(row.code()) && o.message().contains(row.fragment());
    table.add(
        String.format(
            "| %s | %s | %s | %s | %s `%s` | %s `%s` |",
            pass ? "pass" : "FAIL",
            row.area(),
            row.call(),
            cell(row.input()),
            row.code(),
            cell(row.fragment()),
            o.code(),
            cell(shorten(o.message()))));
    assertThat(o.code()).as("code for %s; message: %s", row, o.message()).isEqualTo(row.code());
    assertThat(o.message()).as("message for %s", row).contains(row.fragment());
  }

  Stream<Row> rows() {
    List<Row> rows = new ArrayList<>();
    requestRows(rows);
    registerRows(rows);
    backendRows(rows);
    return rows.stream();
  }

  // ------------------------------------------------------------------------------------ requests

  private void requestRows(List<Row> rows) {
    String inv = "INVALID_ARGUMENT";
    String pre = "FAILED_PRECONDITION";
    List<String> tenThousand = IntStream.range(0, 10_000).mapToObj(i -> "x" + i).toList();
    String longId = "L".repeat(64);
    String hugeId = "H".repeat(100_000);
    rows.add(alloc("known healthy IDs (control)", "OK", "/dev/d0,/dev/d1", List.of("d0", "d1")));
    rows.add(alloc("known non-ASCII ID (control)", "OK", "GPU=ü0", List.of("gpu-ü0")));
    rows.add(alloc("unknown ID", inv, "names unknown device IDs [\"nope\"]", List.of("nope")));
    rows.add(alloc("duplicate IDs", inv, "repeats device IDs [\"d0\"]", List.of("d0", "d0")));
    rows.add(alloc("empty ID list", inv, "names no devices", List.of()));
    rows.add(
        request(
            "Allocate",
            "no container requests",
            inv,
            "has no container requests",
            () -> req.blocking().allocate(AllocateRequest.getDefaultInstance())));
    rows.add(
        request(
            "Allocate",
            "second container request bad",
            inv,
            "Allocate container request 1 for " + REQ + " names unknown device IDs",
            () ->
                req.blocking()
                    .allocate(
                        AllocateRequest.newBuilder()
                            .addContainerRequests(container(List.of("d0")))
                            .addContainerRequests(container(List.of("zz")))
                            .build())));
    rows.add(alloc("10,000 unknown IDs", inv, "names unknown device IDs [\"x0\"", tenThousand));
    rows.add(
        alloc(
            "10,000 copies of a known ID",
            inv,
            "repeats device IDs [\"d1\"]",
            java.util.Collections.nCopies(10_000, "d1")));
    rows.add(alloc("unhealthy ID", pre, "names unhealthy devices [\"u0\"]", List.of("u0")));
    rows.add(
        alloc(
            "healthy and unhealthy IDs",
            pre,
            "names unhealthy devices [\"u1\"]",
            List.of("d2", "u1")));
    rows.add(alloc("64-character ID", inv, "names unknown device IDs [\"LLLL", List.of(longId)));
    rows.add(
        alloc("100,000-character ID", inv, "names unknown device IDs [\"HHHH", List.of(hugeId)));
    rows.add(alloc("unknown non-ASCII ID", inv, "[\"设备-0\"]", List.of("设备-0")));
    rows.add(alloc("emoji ID", inv, "[\"\uD83D\uDE80\"]", List.of("\uD83D\uDE80")));
    rows.add(alloc("ID with NUL", inv, "names unknown device IDs", List.of("d0\u0000")));
    rows.add(
        alloc(
            "path-like ID ../../etc", inv, "[\"../../etc/passwd\"]", List.of("../../etc/passwd")));
    rows.add(
        new Row(
            "request",
            "Allocate (via the fake kubelet)",
            "10,000 unknown IDs",
            inv,
            "names unknown device IDs",
            () -> {
              try {
                kubelet.allocate(REQ, tenThousand.toArray(String[]::new));
                return new Outcome("OK", "allocated");
              } catch (AllocationException e) {
                return new Outcome(e.code().name(), e.description());
              }
            }));

    // GetPreferredAllocation never fails: an error fails the pod's admission, while the kubelet
    // tolerates any answer. What can be repaired is; the rest gets a valid fallback.
    rows.add(pref("valid (control)", "OK", "d1,d0", List.of("d0", "d1", "d2"), List.of("d1"), 2));
    rows.add(
        pref(
            "size larger than available (fallback: all of them)",
            "OK",
            "d0,d1",
            List.of("d1", "d0"),
            List.of(),
            3));
    rows.add(pref("size 0 (empty answer)", "OK", "", List.of("d0"), List.of(), 0));
    rows.add(pref("negative size (empty answer)", "OK", "", List.of("d0"), List.of(), -1));
    rows.add(
        pref(
            "must-include not in available (kept)",
            "OK",
            "d3",
            List.of("d0", "d1"),
            List.of("d3"),
            1));
    rows.add(pref("unknown must-include (kept)", "OK", "zz,d0", List.of("d0"), List.of("zz"), 2));
    rows.add(pref("unknown available ID (ignored)", "OK", "d0", List.of("q", "d0"), List.of(), 1));
    rows.add(pref("duplicate available IDs (once)", "OK", "d0", List.of("d0", "d0"), List.of(), 1));
    rows.add(
        pref("unhealthy available ID (ignored)", "OK", "d0", List.of("u0", "d0"), List.of(), 1));
    rows.add(pref("empty available list", "OK", "", List.of(), List.of(), 1));
    rows.add(pref("10,000 unknown available IDs", "OK", "", tenThousand, List.of(), 1));
    rows.add(
        request(
            "GetPreferredAllocation",
            "no container requests (empty answer)",
            "OK",
            "",
            () ->
                req.blocking()
                    .getPreferredAllocation(PreferredAllocationRequest.getDefaultInstance())));
    rows.add(
        new Row(
            "request",
            "GetPreferredAllocation",
            "plugin does not offer it (fallback)",
            "OK",
            "ok",
            () -> {
              try (RawClient other = RawClient.connect(host.status(OUT).socket())) {
                return call(
                    () ->
                        other
                            .blocking()
                            .getPreferredAllocation(preferredRequest(List.of("ok"), List.of(), 1)));
              }
            }));

    // PreStartContainer comes before every container start, maybe long after Allocate, and the
    // kubelet cannot recover from a refusal: only malformed requests are refused; the hook sees
    // unknown and unhealthy devices and decides.
    rows.add(preStart("known healthy IDs (control)", "OK", "d3", List.of("d3")));
    rows.add(preStart("unknown ID (reaches the hook)", "OK", "nope", List.of("nope")));
    rows.add(preStart("unhealthy ID (reaches the hook)", "OK", "u1", List.of("u1")));
    rows.add(preStart("10,000 unknown IDs (reach the hook)", "OK", "x9999", tenThousand));
    rows.add(preStart("empty ID list", inv, "names no devices", List.of()));
    rows.add(preStart("duplicate IDs", inv, "repeats device IDs [\"d3\"]", List.of("d3", "d3")));
    rows.add(
        preStart("empty ID", inv, "names malformed device IDs: device ID is empty", List.of("")));
    rows.add(
        preStart(
            "64-character ID",
            inv,
            "is 64 characters; the kubelet allows at most 63",
            List.of("L".repeat(64))));
  }

  /** A row for one call on the plugin's request path; the call returns what it got. */
  private static Row request(
      String rpc, String input, String code, String fragment, Supplier<Object> body) {
    return new Row("request", rpc, input, code, fragment, () -> call(body));
  }

  private Row alloc(String input, String code, String fragment, List<String> ids) {
    return request(
        "Allocate",
        input,
        code,
        fragment,
        () -> {
          AllocateResponse r =
              req.blocking()
                  .allocate(
                      AllocateRequest.newBuilder().addContainerRequests(container(ids)).build());
          ContainerAllocateResponse c = r.getContainerResponses(0);
          return c.getDevicesList().stream()
                  .map(d -> d.getHostPath())
                  .collect(Collectors.joining(","))
              + " "
              + c.getEnvsMap();
        });
  }

  private Row pref(
      String input,
      String code,
      String fragment,
      List<String> available,
      List<String> must,
      int size) {
    return request(
        "GetPreferredAllocation",
        input,
        code,
        fragment,
        () ->
            String.join(
                ",",
                req.blocking()
                    .getPreferredAllocation(preferredRequest(available, must, size))
                    .getContainerResponses(0)
                    .getDeviceIDsList()));
  }

  private Row preStart(String input, String code, String fragment, List<String> ids) {
    return request(
        "PreStartContainer",
        input,
        code,
        fragment,
        () -> {
          req.blocking()
              .preStartContainer(
                  PreStartContainerRequest.newBuilder().addAllDevicesIds(ids).build());
          return String.join(",", ids);
        });
  }

  static ContainerAllocateRequest container(List<String> ids) {
    return ContainerAllocateRequest.newBuilder().addAllDevicesIds(ids).build();
  }

  static PreferredAllocationRequest preferredRequest(
      List<String> available, List<String> must, int size) {
    return PreferredAllocationRequest.newBuilder()
        .addContainerRequests(
            ContainerPreferredAllocationRequest.newBuilder()
                .addAllAvailableDeviceIDs(available)
                .addAllMustIncludeDeviceIDs(must)
                .setAllocationSize(size))
        .build();
  }

  static Outcome call(Supplier<Object> rpc) {
    try {
      return new Outcome("OK", String.valueOf(rpc.get()));
    } catch (StatusRuntimeException e) {
      return new Outcome(
          e.getStatus().getCode().name(), String.valueOf(e.getStatus().getDescription()));
    }
  }

  // ------------------------------------------------------------------------------- registration

  private void registerRows(List<Row> rows) {
    String cfg = "ConfigurationException";
    for (String name :
        List.of(
            "no-domain",
            "kubernetes.io/foo",
            "sub.kubernetes.io/foo",
            "requests.example.com/x",
            "Example.com/foo",
            "example.com/-bad",
            "example.com/bad-",
            "example.com/a/b",
            "example.com/" + "n".repeat(64),
            "",
            "example.com/",
            "/foo",
            "example.com/foo bar",
            "exämple.com/foo",
            "a".repeat(245) + "/x")) {
      rows.add(
          new Row(
              "register",
              "resource name",
              name.length() > 40
                  ? name.substring(0, 20) + "…(" + name.length() + " chars)"
                  : "\"" + name + "\"",
              cfg,
              "invalid resource name \"" + name + "\"",
              () -> invalidName(name)));
    }
    String longest = "a".repeat(244) + "/x";
    rows.add(
        new Row(
            "register",
            "resource name",
            "valid, 244-character domain (socket file name too long)",
            cfg,
            "bytes; Unix sockets allow at most 107: use a shorter directory or resource name",
            () -> startHost(kubelet.pluginDir(), longest)));
    for (String name : List.of("example.com/ok_name.1", "e.com/" + "n".repeat(63))) {
      rows.add(
          new Row(
              "register",
              "resource name",
              name.length() > 40
                  ? name.substring(0, 20) + "…(" + name.length() + " chars) (control)"
                  : "\"" + name + "\" (control)",
              "OK",
              "registered",
              () -> validName(name)));
    }
    rows.add(
        new Row(
            "register",
            "socket path",
            "plugin dir of 95 bytes (socket path over 107 bytes)",
            cfg,
            "bytes; Unix sockets allow at most 107: use a shorter directory or resource name",
            () -> {
              Path dir = tmp.resolve("p".repeat(Math.max(1, 95 - tmp.toString().length() - 1)));
              mkdirs(dir);
              return startHost(dir, "example.com/s");
            }));
    rows.add(
        new Row(
            "register",
            "plugin dir",
            "path is a regular file",
            cfg,
            "does not exist or is not a directory",
            () -> {
              Path file = tmp.resolve("file-dir");
              write(file);
              return startHost(file, "example.com/f");
            }));
    rows.add(
        new Row(
            "register",
            "plugin dir",
            "parent is a regular file",
            cfg,
            "does not exist or is not a directory",
            () -> {
              Path file = tmp.resolve("file-parent");
              write(file);
              return startHost(file.resolve("dp"), "example.com/f");
            }));
    rows.add(
        new Row(
            "register",
            "plugin dir",
            "unwritable even for root (/proc/self/fdinfo)",
            cfg,
            "cannot serve example.com/p on /proc/self/fdinfo/example.com_p.sock",
            () -> startHost(Path.of("/proc/self/fdinfo"), "example.com/p")));
    rows.add(
        new Row(
            "register",
            "backends",
            "two backends, one resource name",
            cfg,
            "resource \"example.com/twice\" is served by more than one backend",
            () ->
                outcome(
                    () ->
                        DevicePluginHost.builder()
                            .pluginDir(kubelet.pluginDir())
                            .registrationMode(RegistrationMode.LEGACY)
                            .backend(ScriptedBackend.healthy("example.com/twice", 1))
                            .backend(ScriptedBackend.healthy("example.com/twice", 1))
                            .start())));
    rows.add(
        new Row(
            "register",
            "backends",
            "no backend",
            cfg,
            "no backend: add one with DevicePluginHost.builder().backend(...)",
            () ->
                outcome(() -> DevicePluginHost.builder().pluginDir(kubelet.pluginDir()).start())));
    rows.add(
        new Row(
            "register",
            "allocationTimeout",
            "zero",
            cfg,
            "allocationTimeout must be positive, was PT0S",
            () ->
                outcome(
                    () ->
                        DevicePluginHost.builder()
                            .pluginDir(kubelet.pluginDir())
                            .allocationTimeout(Duration.ZERO)
                            .backend(ScriptedBackend.healthy("example.com/t", 1))
                            .start())));
  }

  private Outcome invalidName(String name) {
    Outcome sdk = startHost(kubelet.pluginDir(), name);
    // The kubelet's own rule (the fake kubelet implements it) must agree.
    String kubeletSays = rawRegister(name);
    if (!kubeletSays.contains("is invalid")) {
      return new Outcome(
          "DISAGREES", "the kubelet's rule accepts \"" + name + "\": " + kubeletSays);
    }
    return sdk;
  }

  /** A valid name registers; in a short directory of its own, so a long name still fits. */
  private Outcome validName(String name) {
    Path dir;
    try {
      dir = Files.createTempDirectory(Path.of("/tmp"), "r");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    try (FakeKubelet own = FakeKubelet.start(dir);
        DevicePluginHost h =
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(ScriptedBackend.healthy(name, 1))
                .start()) {
      own.awaitRegistration(name, STEP);
      await().atMost(STEP).until(h::isReady);
      return new Outcome("OK", "registered with the kubelet");
    } catch (DevicePluginException e) {
      return new Outcome(e.getClass().getSimpleName(), e.getMessage());
    } finally {
      try {
        DirectoryFaultsTest.deleteTree(dir);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  private String rawRegister(String name) {
    MultiThreadIoEventLoopGroup group =
        new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    ManagedChannel ch =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(kubelet.kubeletSocket()))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(group)
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .usePlaintext()
            .build();
    try {
      RegistrationGrpc.newBlockingStub(ch)
          .withDeadlineAfter(5, TimeUnit.SECONDS)
          .register(
              RegisterRequest.newBuilder()
                  .setVersion("v1beta1")
                  .setEndpoint("never-dialled.sock")
                  .setResourceName(name)
                  .build());
      return "accepted";
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode() + ": " + e.getStatus().getDescription();
    } finally {
      ch.shutdownNow();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  private static Outcome startHost(Path dir, String name) {
    return outcome(
        () ->
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(ScriptedBackend.healthy(name, 1))
                .start());
  }

  private static Outcome outcome(Supplier<DevicePluginHost> start) {
    try (DevicePluginHost h = start.get()) {
      return new Outcome("OK", "started: " + h.status());
    } catch (DevicePluginException e) {
      return new Outcome(e.getClass().getSimpleName(), e.getMessage());
    }
  }

  // ------------------------------------------------------------------------------ backend output

  private void backendRows(List<Row> rows) {
    String dropped = "device dropped";
    String internal = "INTERNAL";
    Object[][] bad = {
      {
        "mount host path relative",
        new Mount("/m", "dev/x", true),
        "mount host path \"dev/x\" is not absolute"
      },
      {
        "mount container path relative",
        new Mount("m", "/m", true),
        "mount container path \"m\" is not absolute"
      },
      {
        "mount host path with ..",
        new Mount("/m", "/var/../etc", true),
        "mount host path \"/var/../etc\" contains a '..' segment"
      },
      {"mount path with NUL", new Mount("/m\u0000x", "/m", true), "contains a NUL character"},
      {"mount path empty", new Mount("", "/m", true), "mount container path \"\" is empty"},
      {
        "device node host path with ..",
        new DeviceNode("/dev/x", "/dev/../dev/sda", "rw"),
        "device node host path \"/dev/../dev/sda\" contains a '..' segment"
      },
      {
        "device node container path relative",
        new DeviceNode("dev/x", "/dev/x", "rw"),
        "device node container path \"dev/x\" is not absolute"
      },
      {
        "permissions rwx",
        new DeviceNode("/dev/x", "/dev/x", "rwx"),
        "permissions \"rwx\" contain 'x' (only r, w and m are allowed)"
      },
      {
        "permissions empty",
        new DeviceNode("/dev/x", "/dev/x", ""),
        "permissions are empty (expected a combination of r, w and m)"
      },
      {"permissions rr", new DeviceNode("/dev/x", "/dev/x", "rr"), "permissions \"rr\" repeat 'r'"},
      {
        "permissions RW", new DeviceNode("/dev/x", "/dev/x", "RW"), "permissions \"RW\" contain 'R'"
      },
      {
        "env name 1BAD",
        env("1BAD", "v"),
        "environment variable name \"1BAD\" is invalid (expected [A-Za-z_][A-Za-z0-9_]*)"
      },
      {"env name A-B", env("A-B", "v"), "environment variable name \"A-B\" is invalid"},
      {"env name empty", env("", "v"), "environment variable name \"\" is invalid"},
      {
        "env value with NUL",
        env("OK_NAME", "a\u0000b"),
        "environment variable OK_NAME contains a NUL character"
      },
      {
        "CDI name without =",
        cdi("vendor.com/gpu"),
        "CDI device name \"vendor.com/gpu\" has no '=': expected vendor/class=name"
      },
      {
        "CDI name without /",
        cdi("gpu=0"),
        "CDI device name \"gpu=0\" has no '/': expected vendor/class=name"
      },
      {"CDI vendor bad", cdi("-v.com/gpu=0"), "vendor \"-v.com\" must start with a letter"},
      {"CDI class bad", cdi("v.com/g pu=0"), "class \"g pu\" contains invalid character ' '"},
      {"CDI name empty", cdi("v.com/gpu="), "CDI device name \"v.com/gpu=\""},
      {"annotation key empty", annotation("", "v"), "annotation key is empty"},
    };
    for (Object[] b : bad) {
      String input = (String) b[0];
      Object part = b[1];
      String fragment = (String) b[2];
      rows.add(
          new Row(
              "backend",
              "device list (publish)",
              input,
              dropped,
              fragment,
              () -> publishBad(device(part))));
      rows.add(
          new Row(
              "backend",
              "Allocator answer",
              input,
              internal,
              fragment,
              () -> answerBad(allocation(part))));
    }
    rows.add(
        new Row(
            "backend",
            "device list (publish)",
            "64-character device ID",
            dropped,
            "is 64 characters; the kubelet allows at most 63",
            () -> publishBad(Device.healthy("I".repeat(64)))));
    rows.add(
        new Row(
            "backend",
            "device list (publish)",
            "empty device ID",
            dropped,
            "device ID is empty",
            () -> publishBad(Device.healthy(""))));
    rows.add(
        new Row(
            "backend",
            "device list (publish)",
            "device ID with a control character",
            dropped,
            "contains a control character",
            () -> publishBad(Device.healthy("a\nb"))));
    rows.add(
        new Row(
            "backend",
            "device list (publish)",
            "repeated device ID",
            dropped,
            "is repeated; only the first is kept",
            () -> publishBad(null)));
    rows.add(
        new Row(
            "backend",
            "device list (publish)",
            "null device in the list",
            dropped,
            "is null; dropped",
            () ->
                publishList(Arrays.asList(Device.healthy("ok" + rowIds.incrementAndGet()), null))));
    rows.add(
        new Row(
            "backend",
            "devices()",
            "returns null",
            "BackendException",
            "failed in devices(): IllegalStateException: devices() returned null; the last good device list stays",
            this::discoveryReturnsNull));
    rows.add(
        new Row(
            "backend",
            "device list (publish)",
            "list over 4 MiB (60,000 devices)",
            "list refused",
            "over the kubelet's limit of 4194304 bytes per message (kubernetes#109304); the last good list of 1 devices stays",
            this::publishHuge));
    rows.add(
        new Row(
            "backend",
            "Allocator answer",
            "null",
            internal,
            "the allocator returned null for container request 0",
            () -> answerBad(null)));
  }

  private static Device device(Object part) {
    Device.Builder b = Device.builder("bad");
    if (part instanceof Mount m) {
      b.mount(m);
    } else if (part instanceof DeviceNode n) {
      b.deviceNode(n);
    } else if (part instanceof ContainerAllocation a) {
      a.env().forEach(b::env);
      a.annotations().forEach(b::annotation);
      a.cdiDevices().forEach(b::cdiDevice);
    }
    return b.build();
  }

  private static ContainerAllocation allocation(Object part) {
    ContainerAllocation.Builder b = ContainerAllocation.builder();
    if (part instanceof Mount m) {
      b.mount(m);
    } else if (part instanceof DeviceNode n) {
      b.deviceNode(n);
    } else if (part instanceof ContainerAllocation a) {
      b.merge(a);
    }
    return b.build();
  }

  private static ContainerAllocation env(String name, String value) {
    return ContainerAllocation.builder().env(name, value).build();
  }

  private static ContainerAllocation cdi(String name) {
    return ContainerAllocation.builder().cdiDevice(name).build();
  }

  private static ContainerAllocation annotation(String key, String value) {
    return ContainerAllocation.builder().annotation(key, value).build();
  }

  /** Publishes a good device and a bad one: the bad one is dropped and reported. */
  private Outcome publishBad(Device bad) {
    String good = "ok" + rowIds.incrementAndGet();
    List<Device> list =
        bad == null
            ? List.of(Device.healthy(good), Device.healthy(good))
            : List.of(Device.healthy(good), bad);
    return publishList(list);
  }

  private Outcome publishList(List<Device> list) {
    String good = list.get(0).id();
    int before = errorsOf(OUT).size();
    published.publishOnly(list);
    kubelet.awaitDevices(OUT, l -> l.size() == 1 && l.get(0).id().equals(good), STEP);
    await().atMost(STEP).until(() -> errorsOf(OUT).size() > before);
    DevicePluginException e = errorsOf(OUT).get(errorsOf(OUT).size() - 1);
    return new Outcome(
        e instanceof InvalidBackendDataException ? "device dropped" : e.getClass().getSimpleName(),
        e.getMessage());
  }

  private Outcome discoveryReturnsNull() {
    int before = errorsOf(OUT).size();
    published.returnNull = true;
    try {
      published.rescan();
      await().atMost(STEP).until(() -> errorsOf(OUT).size() > before);
    } finally {
      published.returnNull = false;
    }
    DevicePluginException e = errorsOf(OUT).get(errorsOf(OUT).size() - 1);
    assertThat(kubelet.devices(OUT)).hasSize(1);
    return new Outcome(e.getClass().getSimpleName(), e.getMessage());
  }

  private Outcome publishHuge() {
    String good = "ok" + rowIds.incrementAndGet(); // a known list of 1 device before
    published.publishOnly(List.of(Device.healthy(good)));
    kubelet.awaitDevices(OUT, l -> l.size() == 1 && l.get(0).id().equals(good), STEP);
    List<Device> lastGood = List.of(Device.healthy(good));
    int before = errorsOf(OUT).size();
    List<Device> huge = new ArrayList<>(60_000);
    for (int i = 0; i < 60_000; i++) {
      huge.add(Device.builder(String.format("%063d", i)).numaNode(i % 8).build());
    }
    published.publishOnly(huge);
    await().atMost(STEP).until(() -> errorsOf(OUT).size() > before);
    DevicePluginException e = errorsOf(OUT).get(errorsOf(OUT).size() - 1);
    List<String> seen = kubelet.devices(OUT).stream().map(d -> d.id()).toList();
    if (!seen.equals(lastGood.stream().map(Device::id).toList())) {
      return new Outcome("LIST CHANGED", "the kubelet now sees " + seen.size() + " devices");
    }
    return new Outcome("list refused", e.getMessage());
  }

  /** The allocator answers something invalid: that Allocate fails with INTERNAL naming it. */
  private Outcome answerBad(ContainerAllocation answer) {
    answers.onAllocate = r -> answer;
    try {
      return call(
          () ->
              ans.blocking()
                  .allocate(
                      AllocateRequest.newBuilder()
                          .addContainerRequests(container(List.of("a0")))
                          .build()));
    } finally {
      answers.onAllocate = r -> r.defaultAllocation();
    }
  }

  private List<DevicePluginException> errorsOf(String resource) {
    return errors.getOrDefault(resource, List.of());
  }

  private static void mkdirs(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void write(Path file) {
    try {
      Files.writeString(file, "a regular file");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String shorten(String s) {
    return s.length() > 300 ? s.substring(0, 300) + "…(" + s.length() + " chars)" : s;
  }

  private static String cell(String s) {
    return s.replace("|", "\\|").replace("\n", "\\n").replace("\u0000", "\\0").replace("`", "'");
  }
}
