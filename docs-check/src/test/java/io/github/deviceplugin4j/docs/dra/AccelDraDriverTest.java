package io.github.deviceplugin4j.docs.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.dra.testkit.DraCluster;
import io.github.deviceplugin4j.dra.testkit.DraTest;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraDeviceHealth;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A DRA driver made from a two-device backend, tested on the simulated node of {@code @DraTest}:
 * the driver publishes its devices, the test cluster's scheduler allocates a claim from them, the
 * fake kubelet prepares it, sees a device turn unhealthy, and unprepares it.
 */
@DraTest
class AccelDraDriverTest {
  private static final String DRIVER = "accel.example.com";
  private static final Duration WAIT = Duration.ofSeconds(20);

  /** What the backend finds; the test changes it as hardware would. */
  private final AtomicReference<List<Device>> found =
      new AtomicReference<>(List.of(accel(0, Health.HEALTHY), accel(1, Health.HEALTHY)));

  /** An accelerator: its device node goes into the claim's CDI spec. */
  private static Device accel(int n, Health health) {
    return Device.builder("accel-" + n)
        .deviceNode(DeviceNode.rw("/dev/accel" + n))
        .health(health)
        .build();
  }

  private final DeviceBackend backend =
      new DeviceBackend() {
        @Override
        public String resourceName() {
          return "example.com/accel";
        }

        @Override
        public List<Device> devices() {
          return found.get();
        }

        @Override
        public Duration pollInterval() {
          return Duration.ofMillis(100);
        }
      };

  @Test
  void aClaimAllocatedFromThePublishedDevicesIsPreparedAndUnprepared(DraCluster cluster)
      throws Exception {
    FakeKubelet kubelet = cluster.kubelet();
    BackendDriver driver =
        BackendDriver.builder(DRIVER, backend)
            .kubernetesClient(cluster.client())
            .nodeName(cluster.nodeName())
            .cdiDirectory(cluster.cdiDir())
            .build();
    driver.start();
    try (driver;
        DraPluginHost host =
            DraPluginHost.builder(DRIVER, driver)
                .pluginDir(cluster.pluginDir(DRIVER))
                .registryDir(cluster.registryDir())
                .start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      cluster.awaitDevices(DRIVER, devices -> devices.size() == 2, WAIT);

      // What a cluster admin installs once: the class of the driver's devices.
      cluster.scheduler().installDeviceClass(DRIVER);
      // A user's claim for one device; the cluster allocates it as the scheduler would.
      ResourceClaim claim =
          cluster.allocate(
              new ResourceClaimBuilder()
                  .withNewMetadata()
                  .withName("accel")
                  .withNamespace("default")
                  .endMetadata()
                  .withNewSpec()
                  .withNewDevices()
                  .addNewRequest()
                  .withName("accel")
                  .withNewExactly()
                  .withDeviceClassName(DRIVER)
                  .endExactly()
                  .endRequest()
                  .endDevices()
                  .endSpec()
                  .build());
      String uid = claim.getMetadata().getUid();
      String device =
          claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();

      // The kubelet prepares the claim for a pod: the driver answers with a CDI device.
      DraResult prepared =
          kubelet
              .dra()
              .prepareResources("pod-1", DRIVER, List.of(new DraClaim("default", uid, "accel")));
      assertThat(prepared.ok()).as("%s", prepared).isTrue();
      assertThat(prepared.claim(uid).devices())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.deviceName()).isEqualTo(device);
                assertThat(d.cdiDeviceIds())
                    .containsExactly(DRIVER + "/device=" + uid + "-" + device);
              });

      // The device fails: the kubelet's health stream says so (the testkit's DraDeviceHealth).
      found.set(List.of(accel(0, Health.UNHEALTHY), accel(1, Health.HEALTHY)));
      kubelet
          .dra()
          .awaitDeviceHealth(
              DRIVER,
              health ->
                  health.stream()
                      .anyMatch(
                          h ->
                              h.deviceName().equals("accel-0")
                                  && h.status() == DraDeviceHealth.Status.UNHEALTHY),
              WAIT);

      DraResult unprepared = kubelet.dra().unprepareResources("pod-1", DRIVER);
      assertThat(unprepared.ok()).as("%s", unprepared).isTrue();
    }
  }
}
