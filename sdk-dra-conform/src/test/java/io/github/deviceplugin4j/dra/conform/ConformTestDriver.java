package io.github.deviceplugin4j.dra.conform;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.dra.BackendDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A DRA driver for {@link DraConformTest}, run as its own JVM by {@code conform --dra}: three
 * devices, {@code dev-0} unhealthy while the file {@code STATE/broken} exists. It finds the API
 * server, the node and the plugins registry in the environment conform gives it.
 *
 * <p>Arguments: mode, plugin directory, state directory. Modes: {@code good} (an unhealthy device
 * is tainted), {@code leave-out} (an unhealthy device is left out of the slices), {@code
 * ignore-health} (never unhealthy), {@code bad-slice} (also writes a slice of its own with 129
 * devices and a device name that is not a DNS label, past the SDK's checks).
 */
public final class ConformTestDriver {
  static final String DRIVER = "conform.example.com";

  private ConformTestDriver() {}

  /**
   * Serves until SIGTERM.
   *
   * @param args mode, plugin directory, state directory
   */
  public static void main(String[] args) {
    String mode = args[0];
    Path pluginDir = Path.of(args[1]);
    Path state = Path.of(args[2]);
    DeviceBackend backend =
        new DeviceBackend() {
          @Override
          public String resourceName() {
            return "example.com/conform";
          }

          @Override
          public List<Device> devices() {
            List<Device> out = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
              Device d = Device.healthy("dev-" + i);
              if (i == 0
                  && !mode.equals("ignore-health")
                  && Files.exists(state.resolve("broken"))) {
                d = d.withHealth(Health.UNHEALTHY, "simulated error counter");
              }
              out.add(d);
            }
            return out;
          }

          @Override
          public Duration pollInterval() {
            return Duration.ofMillis(100);
          }
        };
    if (mode.equals("bad-slice")) {
      try (KubernetesClient client = new KubernetesClientBuilder().build()) {
        List<io.fabric8.kubernetes.api.model.resource.v1.Device> devices = new ArrayList<>();
        devices.add(new DeviceBuilder().withName("Bad_Name").build());
        for (int i = 1; i < 129; i++) {
          devices.add(new DeviceBuilder().withName("d" + i).build());
        }
        client
            .dynamicResourceAllocation()
            .v1()
            .resourcesSlices()
            .resource(
                new ResourceSliceBuilder()
                    .withNewMetadata()
                    .withName("hand-written")
                    .endMetadata()
                    .withNewSpec()
                    .withDriver(DRIVER)
                    .withNodeName(System.getenv("NODE_NAME"))
                    .withNewPool()
                    .withName("hand-written")
                    .withGeneration(1L)
                    .withResourceSliceCount(1L)
                    .endPool()
                    .withDevices(devices)
                    .endSpec()
                    .build())
            .create();
      }
    }
    BackendDriver.builder(DRIVER, backend)
        .cdiDirectory(state.resolve("cdi"))
        .healthTaints(!mode.equals("leave-out"))
        .host()
        .pluginDir(pluginDir)
        .registryDir(Path.of(System.getenv("PLUGINS_REGISTRY_DIR")))
        .run();
  }
}
