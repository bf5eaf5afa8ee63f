package io.github.deviceplugin4j.examples.demo;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import io.github.deviceplugin4j.dra.testkit.MockApiServers;
import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fpgadra.FpgaDraConfig;
import io.github.deviceplugin4j.examples.fpgadra.FpgaDraDriver;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraClaimResult;
import io.github.deviceplugin4j.testkit.DraDeviceHealth;
import io.github.deviceplugin4j.testkit.DraRegistration;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * The demo's DRA part: the FPGA example's backend served as a DRA driver ({@link FpgaDraDriver}) on
 * the same simulated node, with fabric8's mock API server (CRUD mode, real HTTP on loopback) as the
 * API server, the testkit's {@link DraScheduler} playing the scheduler, and the testkit's fake
 * kubelet (its DRA side) finding the driver in the plugins registry, preparing and unpreparing the
 * claim and watching health.
 */
final class DraDemo {
  static final String NODE = "demo-node";
  static final String NAMESPACE = "demo";
  static final String POD_UID = "demo-accel-pod-uid";

  private final Demo demo;

  DraDemo(Demo demo) {
    this.demo = demo;
  }

  void run(Path work, Path root, DflFixture fpga) throws Exception {
    // The mock server logs every request through java.util.logging: keep it out of the output.
    KubernetesMockServer api = MockApiServers.startCrud();
    Path dra = work.resolve("dra");
    try (KubernetesClient client = api.createClient();
        FakeKubelet kubelet =
            FakeKubelet.builder()
                .pluginDir(dra.resolve("device-plugins"))
                .registryDir(dra.resolve("registry"))
                .start()) {
      client
          .nodes()
          .resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
          .create();
      demo.step("api", "mock API server (fabric8, CRUD) on " + client.getMasterUrl());
      FpgaDraConfig config =
          FpgaDraConfig.parse(
              new String[] {
                "--root=" + root,
                "--node-name=" + NODE,
                "--poll-interval=" + Demo.POLL.toMillis() + "ms",
                "--plugin-dir=" + dra.resolve("plugins/fpga.example.com"),
                "--registry-dir=" + dra.resolve("registry"),
                "--cdi-dir=" + dra.resolve("cdi")
              },
              Map.of());
      BackendDriver driver = FpgaDraDriver.builder(config).kubernetesClient(client).build();
      driver.start();
      try (driver;
          DraPluginHost host =
              DraPluginHost.builder(config.driverName(), driver)
                  .pluginDir(config.pluginDir())
                  .registryDir(config.registryDir())
                  .start()) {
        DraRegistration registered =
            kubelet.dra().awaitRegistration(config.driverName(), Demo.WAIT);
        if (!registered.endpoint().equals(host.draSocket().toString())) {
          throw new IllegalStateException("the kubelet registered another endpoint: " + registered);
        }
        demo.step(
            "dra",
            String.format(
                "driver %s registers as DRAPlugin, endpoint %s, the kubelet chose service %s",
                registered.driver(),
                Path.of(registered.endpoint()).getFileName(),
                registered.service()));

        // Slices published from the backend's ports.
        await(() -> devices(client).size() == 5, "3 ports and 2 cards in the ResourceSlices");
        for (ResourceSlice s : slices(client)) {
          demo.step(
              "api",
              String.format(
                  "ResourceSlice %s: %d devices, pool %s generation %d (%d slice(s) in the pool)",
                  s.getMetadata().getName(),
                  s.getSpec().getDevices().size(),
                  s.getSpec().getPool().getName(),
                  s.getSpec().getPool().getGeneration(),
                  s.getSpec().getPool().getResourceSliceCount()));
          for (Device d : s.getSpec().getDevices()) {
            demo.detail(d.getName() + " " + describe(d.getAttributes()));
          }
        }

        // The scheduler's part: the testkit's allocator picks a port holding accelerator AFU_A
        // from the slices (ports and, since they are partitions of one, whole cards), through the
        // DeviceClass and the claim's CEL selector.
        DraScheduler scheduler = DraScheduler.forNode(client, NODE);
        scheduler.installDeviceClass(config.driverName());
        ResourceClaim claim =
            scheduler.allocate(
                new ResourceClaimBuilder()
                    .withNewMetadata()
                    .withName("accel-claim")
                    .withNamespace(NAMESPACE)
                    .endMetadata()
                    .withNewSpec()
                    .withNewDevices()
                    .addNewRequest()
                    .withName("port")
                    .withNewExactly()
                    .withDeviceClassName(config.driverName())
                    .addNewSelector()
                    .withNewCel()
                    .withExpression(
                        // Cards carry no AFU: ask whether the attribute is there first, or CEL
                        // fails the whole allocation on the first card ("no such key").
                        String.format(
                            "\"%2$s\" in device.attributes[\"%1$s\"]"
                                + " && device.attributes[\"%1$s\"].%2$s == \"%3$s\"",
                            config.driverName(), FpgaDraDriver.AFU_ID, Demo.AFU_A))
                    .endCel()
                    .endSelector()
                    .endExactly()
                    .endRequest()
                    .endDevices()
                    .endSpec()
                    .build());
        String pickedName =
            claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        Device picked =
            devices(client).stream()
                .filter(d -> d.getName().equals(pickedName))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no device " + pickedName));
        String uid = claim.getMetadata().getUid();
        demo.step(
            "sched",
            String.format(
                "allocated claim %s/%s (uid %s): request port -> device %s in pool %s (afuId %s...)",
                NAMESPACE,
                claim.getMetadata().getName(),
                uid,
                picked.getName(),
                NODE,
                Demo.AFU_A.substring(0, 8)));

        DraClaim wire = new DraClaim(NAMESPACE, uid, claim.getMetadata().getName());
        DraResult prepared =
            kubelet.dra().prepareResources(POD_UID, config.driverName(), List.of(wire));
        if (!prepared.ok()) {
          throw new IllegalStateException("prepare failed: " + prepared.kubeletError().get());
        }
        demo.step(
            "kubelet",
            "NodePrepareResources: CDI devices "
                + prepared.claim(uid).devices().stream()
                    .flatMap(d -> d.cdiDeviceIds().stream())
                    .collect(Collectors.joining(", ")));
        Path spec = driver.cdiSpecFile(uid);
        demo.step("dra", "wrote CDI spec " + spec.getFileName() + ":");
        demo.detail(Files.readString(spec).replaceAll("\\s+", " ").trim());

        // A fault: error bits on the allocated port; the health stream says so.
        int port = portNumber(picked.getName());
        fpga.portErrors(port, "0x1");
        long faulted = System.nanoTime();
        demo.step("sysfs", "dfl-port." + port + " reports errors (errors/errors = 0x1)");
        DraDeviceHealth sick =
            awaitHealth(
                kubelet, config.driverName(), picked.getName(), DraDeviceHealth.Status.UNHEALTHY);
        demo.step(
            "kubelet",
            String.format(
                "health stream: %s %s after %d ms (%s)",
                picked.getName(),
                sick.status(),
                (System.nanoTime() - faulted) / 1_000_000,
                sick.message()));
        await(
            () ->
                devices(client).stream()
                    .anyMatch(
                        d ->
                            d.getName().equals(picked.getName())
                                && d.getTaints() != null
                                && !d.getTaints().isEmpty()),
            "the unhealthy port tainted in the slices");
        demo.step(
            "api",
            "slices now taint "
                + picked.getName()
                + " ("
                + devices(client).stream()
                    .filter(d -> d.getName().equals(picked.getName()))
                    .flatMap(d -> d.getTaints().stream())
                    .map(t -> t.getKey() + "=" + t.getValue() + ":" + t.getEffect())
                    .collect(Collectors.joining(", "))
                + "), pool generation "
                + slices(client).get(0).getSpec().getPool().getGeneration()
                + ": no new claim gets the unhealthy port");
        fpga.portErrors(port, "0x0");
        awaitHealth(kubelet, config.driverName(), picked.getName(), DraDeviceHealth.Status.HEALTHY);
        demo.step("kubelet", "health stream: " + picked.getName() + " HEALTHY again");

        DraClaimResult unprepared =
            kubelet.dra().unprepareResources(POD_UID, config.driverName()).claim(uid);
        demo.step(
            "kubelet",
            "NodeUnprepareResources: "
                + (unprepared.ok() ? "ok" : unprepared.error())
                + ", CDI spec "
                + (Files.exists(spec) ? "still there" : "removed"));
      }
      demo.step("dra", "driver stopped: sockets removed");
    } finally {
      api.destroy();
    }
  }

  private static List<ResourceSlice> slices(KubernetesClient client) {
    return client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems().stream()
        .sorted(Comparator.comparing(s -> s.getMetadata().getName()))
        .toList();
  }

  private static List<Device> devices(KubernetesClient client) {
    return slices(client).stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .sorted(Comparator.comparing(Device::getName))
        .toList();
  }

  private static String describe(Map<String, DeviceAttribute> attributes) {
    return attributes.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .map(
            e -> {
              DeviceAttribute a = e.getValue();
              Object v = a.getString() != null ? a.getString() : a.getInt();
              String s = String.valueOf(v);
              return e.getKey() + "=" + (s.length() > 12 ? s.substring(0, 8) + "..." : s);
            })
        .collect(Collectors.joining(" "));
  }

  /** The port behind a DRA device name (names are derived from the port's ID). */
  private static int portNumber(String draName) {
    for (int i = 0; i < 64; i++) {
      if (BackendDevices.deviceName("dfl-port." + i).equals(draName)) {
        return i;
      }
    }
    throw new IllegalStateException("no port behind " + draName);
  }

  /** Waits until the fake kubelet's health stream reports the device with the given status. */
  private static DraDeviceHealth awaitHealth(
      FakeKubelet kubelet, String driver, String device, DraDeviceHealth.Status wanted) {
    return kubelet
        .dra()
        .awaitDeviceHealth(
            driver,
            list ->
                list.stream().anyMatch(h -> h.deviceName().equals(device) && h.status() == wanted),
            Demo.WAIT)
        .stream()
        .filter(h -> h.deviceName().equals(device))
        .findFirst()
        .orElseThrow();
  }

  /** Polls the API server (state it keeps, no event to wait on) until the condition holds. */
  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + Demo.WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(Duration.ofMillis(20).toMillis());
    }
  }
}
