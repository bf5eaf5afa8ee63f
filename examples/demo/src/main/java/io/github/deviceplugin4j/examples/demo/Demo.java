package io.github.deviceplugin4j.examples.demo;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.ResourceStatus;
import io.github.deviceplugin4j.examples.common.PluginMetrics;
import io.github.deviceplugin4j.examples.fixtures.SimulatedNode;
import io.github.deviceplugin4j.examples.fixtures.SriovFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import io.github.deviceplugin4j.examples.fpga.FpgaBackend;
import io.github.deviceplugin4j.examples.fpga.FpgaConfig;
import io.github.deviceplugin4j.examples.generic.GenericPlugin;
import io.github.deviceplugin4j.examples.infiniband.InfinibandBackend;
import io.github.deviceplugin4j.examples.infiniband.InfinibandConfig;
import io.github.deviceplugin4j.examples.nic.NicBackend;
import io.github.deviceplugin4j.examples.nic.NicConfig;
import io.github.deviceplugin4j.examples.nic.NicPool;
import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.PodRequest;
import io.github.deviceplugin4j.testkit.Registration;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs the example plugins against the fake kubelet on a generated node and prints what happens:
 * registration, the advertised devices and capacity, allocations with their container edits, a few
 * lines of the plugins' {@code /metrics} after them, a device failing and recovering, and a kubelet
 * restart with the re-registration time. Then the FPGA backend runs as a DRA driver against a mock
 * API server: slices, a claim allocated, prepared into a CDI spec, a health change, and the claim
 * unprepared ({@link DraDemo}).
 *
 * <p>Everything printed is read back from the fake kubelet (what it received over gRPC on Unix
 * sockets) or from the files the plugins wrote; nothing is simulated in between.
 *
 * <pre>{@code
 * java -jar examples/demo/target/deviceplugin4j-demo.jar
 * }</pre>
 */
public final class Demo {
  static final String AFU_A = SimulatedNode.AFU_A;
  static final Duration WAIT = Duration.ofSeconds(20);
  static final Duration POLL = Duration.ofMillis(200);

  private final PrintStream out;
  private final long t0 = System.nanoTime();

  /**
   * A demo printing to a stream.
   *
   * @param out where progress lines go
   */
  public Demo(PrintStream out) {
    this.out = out;
  }

  /**
   * Runs the demo and exits with its status (0 when every step worked).
   *
   * @param args none
   */
  public static void main(String[] args) {
    quietLogging();
    int status;
    try {
      status = new Demo(System.out).run();
    } catch (Exception | AssertionError e) {
      System.out.flush();
      System.err.println("demo failed: " + e);
      e.printStackTrace();
      status = 1;
    }
    System.out.flush();
    // Everything was closed: no thread should keep the JVM alive. Netty's GlobalEventExecutor
    // thread ends by itself about a second after its last task, so allow a few seconds.
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && !t.isDaemon() && t != Thread.currentThread()) {
        try {
          t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    List<String> leftover =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && !t.isDaemon() && t != Thread.currentThread())
            .map(Thread::getName)
            .sorted()
            .toList();
    if (!leftover.isEmpty()) {
      System.err.println("warning: non-daemon threads still running after close: " + leftover);
    }
    System.exit(status);
  }

  /**
   * Runs every step in a fresh temporary directory, then removes it.
   *
   * @return 0 when every step worked
   * @throws Exception when a step fails
   */
  public int run() throws Exception {
    Path work = Files.createTempDirectory("dp4j-");
    try {
      return run(work);
    } finally {
      deleteTree(work);
    }
  }

  private int run(Path work) throws Exception {
    out.println("deviceplugin4j demo: three example plugins and a fake kubelet in one process,");
    out.println("talking the device plugin API (v1beta1) over gRPC on Unix sockets in " + work);
    out.println();

    // 1. A node: sysfs and /dev as the kernel lays them out.
    SimulatedNode node = SimulatedNode.create(work.resolve("root"));
    Path root = node.root();
    SriovFixture nic = node.nic();
    step("sysfs", "generated a node under " + root + ":");
    node.description().forEach(this::detail);

    // 2. The fake kubelet.
    try (FakeKubelet kubelet = FakeKubelet.start(work.resolve("dp"))) {
      step("kubelet", "fake kubelet serving " + kubelet.kubeletSocket());

      // 3. The plugins: every backend in one DevicePluginHost, each resource on its own socket.
      Path devinfo = work.resolve("devinfo");
      FpgaConfig fpgaConfig =
          new FpgaConfig(
              root, FpgaConfig.Mode.AF, "fpga.example.com", POLL, work.resolve("fpga.ready"));
      NicConfig nicConfig =
          new NicConfig(
              root,
              "nic.example.com",
              List.of(
                  new NicPool(
                      "sriov_net",
                      List.of("ens1f0", "ens1f1"),
                      List.of("8086"),
                      List.of(),
                      List.of("iavf")),
                  new NicPool(
                      "sriov_dpdk",
                      List.of("ens1f0", "ens1f1"),
                      List.of(),
                      List.of(),
                      List.of("vfio-pci"))),
              devinfo,
              POLL,
              work.resolve("nic.ready"));
      InfinibandConfig ibConfig = InfinibandConfig.exclusive(root).withPollInterval(POLL);
      InfinibandConfig ibShared = InfinibandConfig.shared(root, 4).withPollInterval(POLL);

      DevicePluginHost.Builder builder =
          DevicePluginHost.builder()
              .pluginDir(kubelet.pluginDir())
              .registrationMode(RegistrationMode.LEGACY);
      List<String> resources = new ArrayList<>();
      for (FpgaBackend b : FpgaBackend.discover(fpgaConfig)) {
        builder.backend(b);
        resources.add(b.resourceName());
      }
      for (NicPool pool : nicConfig.pools()) {
        NicBackend b = new NicBackend(nicConfig, pool);
        builder.backend(b);
        resources.add(b.resourceName());
      }
      InfinibandBackend sharedHcas = new InfinibandBackend(ibShared);
      builder.backend(new InfinibandBackend(ibConfig)).backend(sharedHcas, sharedHcas.sharing());
      resources.add(ibConfig.resourceName());
      resources.add(ibShared.resourceName());
      // The kubelet sees a registration before the plugin has its answer: host.status() after the
      // restart waits for the plugins' side of each re-registration.
      Set<String> reRegistered = ConcurrentHashMap.newKeySet();
      CountDownLatch allReRegistered = new CountDownLatch(resources.size());
      builder.listener(
          new PluginListener() {
            @Override
            public void onRegistered(String resource, RegistrationMode mode, boolean again) {
              if (again && reRegistered.add(resource)) {
                allReRegistered.countDown();
              }
            }
          });

      // The example images' HTTP endpoint (/metrics, /healthz, /readyz), here on a free loopback
      // port.
      PluginMetrics.enable(
          builder, Optional.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));

      step(
          "plugins",
          "starting "
              + resources.size()
              + " resources in one DevicePluginHost, each on its own socket (legacy registration)");
      Instant started = Instant.now();
      try (DevicePluginHost host = builder.start()) {
        step(
            "plugins",
            "DevicePluginHost.start() returned after "
                + Duration.between(started, Instant.now()).toMillis()
                + " ms");

        // 4. Registration and advertised devices.
        for (String resource : resources) {
          Registration r = kubelet.awaitRegistration(resource, WAIT);
          step(
              "kubelet",
              String.format(
                  "registered %s, %d ms after start() was called (endpoint %s, pre-start %s, preferred allocation %s)",
                  resource,
                  Duration.between(started, r.at()).toMillis(),
                  Path.of(r.endpoint()).getFileName(),
                  r.preStartRequired() ? "yes" : "no",
                  r.preferredAllocationAvailable() ? "yes" : "no"));
        }
        for (String resource : resources) {
          List<DeviceState> devices = kubelet.awaitDevices(resource, d -> !d.isEmpty(), WAIT);
          step(
              "kubelet",
              String.format(
                  "%s: capacity %d, allocatable %d",
                  resource, kubelet.capacity(resource), kubelet.allocatable(resource)));
          detail(describe(devices));
        }

        // 5. Allocations, each with its container edits.
        String netRes = "nic.example.com/sriov_net";
        Allocation net =
            kubelet.allocate(
                PodRequest.count(netRes, 2).withPod("demo", "sriov-app", "uid-sriov-app"));
        allocationLines("sriov-app", net);
        for (String vf : net.deviceIds()) {
          Path file = devinfo.resolve("nic.example.com-sriov_net-" + vf + "-device.json");
          detail("file " + file.getFileName() + " = " + Files.readString(file).trim());
        }
        Allocation dpdk =
            kubelet.allocate(
                PodRequest.count("nic.example.com/sriov_dpdk", 1)
                    .withPod("demo", "dpdk-app", "uid-dpdk-app"));
        allocationLines("dpdk-app", dpdk);
        Allocation rdma =
            kubelet.allocate(
                PodRequest.count(ibConfig.resourceName(), 2)
                    .withMustInclude("mlx5_2")
                    .withPod("demo", "mpi-rank", "uid-mpi-rank"));
        allocationLines("mpi-rank", rdma);
        detail(
            "the plugin's preferred allocation kept the container on NUMA "
                + numaOf(kubelet, ibConfig.resourceName(), rdma.deviceIds())
                + " (the kubelet asked for 2 HCAs including mlx5_2)");
        String fpgaRes = fpgaConfig.resourceName(AFU_A);
        Allocation accel =
            kubelet.allocate(
                PodRequest.count(fpgaRes, 1).withPod("demo", "accel-app", "uid-accel-app"));
        allocationLines("accel-app", accel);
        long preStarts =
            kubelet.events().stream()
                .filter(
                    e ->
                        e.kind() == KubeletEvent.Kind.PRE_START_CONTAINER
                            && e.resource().equals(fpgaRes))
                .count();
        detail(
            "PreStartContainer called " + preStarts + " time(s): the FPGA pre-start check passed");

        metricLines(host, fpgaRes);

        // The generic plugin: no code, a file with a serial-port group shared 2x.
        SysfsTree.create(root).deviceNode("ttyUSB0");
        Path genericFile = Files.createDirectories(work.resolve("generic")).resolve("config.yaml");
        Files.writeString(
            genericFile,
            "resources:\n  - name: serial\n    count: 2\n"
                + "    groups:\n      - paths: [\"/dev/ttyUSB*\"]\n");
        step("generic", "config " + genericFile.getFileName() + ": /dev/ttyUSB* shared 2x");
        try (GenericPlugin generic =
            GenericPlugin.start(
                genericFile,
                root,
                POLL,
                b -> b.pluginDir(kubelet.pluginDir()).registrationMode(RegistrationMode.LEGACY))) {
          String serialRes = "generic.example.com/serial";
          List<DeviceState> replicas = kubelet.awaitDevices(serialRes, d -> d.size() == 2, WAIT);
          step(
              "kubelet",
              serialRes
                  + ": "
                  + replicas.stream()
                      .map(DeviceState::id)
                      .sorted()
                      .collect(Collectors.joining(", ")));
          Allocation serial =
              kubelet.allocate(
                  PodRequest.devices(serialRes, "ttyUSB0::0", "ttyUSB0::1")
                      .withPod("demo", "serial-app", "uid-serial-app"));
          allocationLines("serial-app", serial);
          detail(
              "two replicas of one port: its device node given once ("
                  + generic.config().resources().get(0).sharing()
                  + ")");
        }

        // 6. A device failing and recovering: the PF's link goes down, then up.
        nic.linkState("ens1f0", false);
        Instant down = Instant.now();
        step("sysfs", "link of PF ens1f0 goes down (operstate: down)");
        kubelet.awaitDevices(netRes, d -> d.stream().noneMatch(DeviceState::healthy), WAIT);
        step(
            "kubelet",
            String.format(
                "%s: all %d VFs Unhealthy, allocatable %d of %d (seen %d ms after the change, poll interval %d ms)",
                netRes,
                kubelet.capacity(netRes),
                kubelet.allocatable(netRes),
                kubelet.capacity(netRes),
                Duration.between(down, Instant.now()).toMillis(),
                POLL.toMillis()));
        nic.linkState("ens1f0", true);
        Instant up = Instant.now();
        step("sysfs", "link of PF ens1f0 comes back up");
        kubelet.awaitDevices(netRes, d -> d.stream().allMatch(DeviceState::healthy), WAIT);
        step(
            "kubelet",
            String.format(
                "%s: all VFs Healthy again, allocatable %d of %d (seen %d ms after the change)",
                netRes,
                kubelet.allocatable(netRes),
                kubelet.capacity(netRes),
                Duration.between(up, Instant.now()).toMillis()));

        // 7. A kubelet restart: sockets deleted, kubelet.sock served again; every plugin
        // re-registers.
        Mark restarted = kubelet.restart();
        step(
            "kubelet",
            "restarted: deleted the sockets in its plugin directory and serves kubelet.sock again");
        long worst = 0;
        for (String resource : resources) {
          Registration r = kubelet.awaitRegistration(resource, restarted, WAIT);
          long ms = (r.nanos() - restarted.nanos()) / 1_000_000;
          worst = Math.max(worst, ms);
          step("kubelet", String.format("re-registered %s after %d ms", resource, ms));
        }
        for (String resource : resources) {
          kubelet.awaitDevices(
              resource, d -> !d.isEmpty() && d.stream().allMatch(DeviceState::healthy), WAIT);
        }
        step(
            "kubelet",
            "all "
                + resources.size()
                + " resources back within "
                + worst
                + " ms; healthy devices listed again: "
                + resources.stream()
                    .map(r -> Integer.toString(kubelet.capacity(r)))
                    .collect(Collectors.joining("/")));

        // The plugins' own view of the same facts.
        if (!allReRegistered.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException(
              "the plugins did not see every re-registration accepted: only " + reRegistered);
        }
        List<ResourceStatus> statuses = host.status();
        step(
            "plugins",
            String.format(
                "host.status(): %d of %d resources registered, registrations per resource %s,"
                    + " %d of %d devices healthy",
                statuses.stream().filter(ResourceStatus::registered).count(),
                statuses.size(),
                statuses.stream()
                    .map(st -> Integer.toString(st.registrations()))
                    .distinct()
                    .collect(Collectors.joining("/")),
                statuses.stream().mapToInt(ResourceStatus::healthyDevices).sum(),
                statuses.stream().mapToInt(ResourceStatus::totalDevices).sum()));

        // 8. Shutting down.
        Map<KubeletEvent.Kind, Long> counts =
            kubelet.events().stream()
                .collect(
                    Collectors.groupingBy(KubeletEvent::kind, TreeMap::new, Collectors.counting()));
        step(
            "kubelet",
            "gRPC traffic seen: "
                + counts.entrySet().stream()
                    .map(e -> e.getKey().name().toLowerCase(Locale.ROOT) + "=" + e.getValue())
                    .collect(Collectors.joining(", ")));
      }
      long left;
      try (Stream<Path> s = Files.list(devinfo)) {
        left = s.count();
      }
      step("plugins", "stopped: sockets removed, device-info files left: " + left);
    }
    step("kubelet", "stopped");

    // 9. The same FPGA backend as a DRA driver (Kubernetes 1.34+), on the same node.
    out.println();
    out.println(
        "DRA: the FPGA backend as a Dynamic Resource Allocation driver, against a mock API server");
    new DraDemo(this).run(work, root, node.fpga());
    out.println();
    out.println(
        "demo finished: every line above was read from the fake kubelet, the mock API server, the"
            + " DRA driver's sockets or files the plugins wrote.");
    return 0;
  }

  private void allocationLines(String pod, Allocation a) {
    step(
        "kubelet",
        String.format(
            "allocated %d x %s to pod demo/%s: %s",
            a.deviceIds().size(), a.resourceName(), pod, String.join(", ", a.deviceIds())));
    new TreeMap<>(a.envs()).forEach((k, v) -> detail("env    " + k + "=" + v));
    for (DeviceSpec d : a.devices()) {
      detail(
          "device "
              + d.hostPath()
              + (d.containerPath().equals(d.hostPath()) ? "" : " -> " + d.containerPath())
              + " ("
              + d.permissions()
              + ")");
    }
    a.mounts()
        .forEach(
            m ->
                detail(
                    "mount  "
                        + m.hostPath()
                        + " -> "
                        + m.containerPath()
                        + (m.readOnly() ? " (ro)" : "")));
    List<String> problems = a.problems();
    if (!problems.isEmpty()) {
      throw new IllegalStateException("malformed allocation: " + problems);
    }
  }

  /** Prints a few lines of the plugins' own /metrics, fetched over HTTP as Prometheus would. */
  private void metricLines(DevicePluginHost host, String fpgaRes) throws Exception {
    InetSocketAddress a = host.httpAddress().orElseThrow();
    URI uri =
        URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort() + "/metrics");
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> r =
        http.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET " + uri + " answered " + r.statusCode());
    }
    List<String> lines =
        r.body()
            .lines()
            .filter(l -> !l.startsWith("#"))
            .filter(
                l ->
                    l.startsWith("deviceplugin4j_rpc_seconds_count{code=\"OK\",method=\"Allocate\"")
                        || (l.contains("resource=\"" + fpgaRes + "\"")
                            && (l.startsWith("deviceplugin4j_devices{")
                                || l.startsWith("deviceplugin4j_registered{")
                                || l.startsWith("deviceplugin4j_devices_requested_total{"))))
            .sorted()
            .toList();
    step("plugins", "GET " + uri + " (the example images serve it on :9400):");
    lines.forEach(this::detail);
  }

  private static String numaOf(FakeKubelet kubelet, String resource, List<String> ids) {
    return kubelet.devices(resource).stream()
        .filter(d -> ids.contains(d.id()))
        .flatMap(d -> d.numaNodes().stream())
        .distinct()
        .sorted()
        .map(String::valueOf)
        .collect(Collectors.joining(","));
  }

  private static String describe(List<DeviceState> devices) {
    return devices.stream()
        .sorted(Comparator.comparing(DeviceState::id))
        .map(
            d ->
                d.id()
                    + " ("
                    + d.health()
                    + (d.numaNodes().isEmpty() ? "" : ", NUMA " + d.numaNodes().get(0))
                    + ")")
        .collect(Collectors.joining(", "));
  }

  void step(String who, String what) {
    out.printf(Locale.ROOT, "[%6.2fs] %-8s %s%n", (System.nanoTime() - t0) / 1e9, who, what);
  }

  void detail(String what) {
    out.println("                   " + what);
  }

  /**
   * Keeps log lines (slf4j-simple, stderr) out of the demo's progress lines; run with {@code
   * -Dorg.slf4j.simpleLogger.defaultLogLevel=info} to see the SDK's and the plugins' logs too.
   */
  static void quietLogging() {
    setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "error");
    setIfAbsent("org.slf4j.simpleLogger.log.io.netty", "error");
    setIfAbsent("org.slf4j.simpleLogger.log.io.grpc", "error");
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
