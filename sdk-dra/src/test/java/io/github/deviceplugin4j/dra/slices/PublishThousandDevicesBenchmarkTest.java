package io.github.deviceplugin4j.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.dra.BackendDevices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Publishing time for 1,000 devices against the mock API server (real HTTP on loopback): maps the
 * backend devices, then times a first publish (8 creates), a one-device change (8 updates, the
 * generation bumped), an unchanged list (no call) and a removal (8 deletes). Prints the numbers;
 * asserts only that the result is right, never a time.
 */
class PublishThousandDevicesBenchmarkTest {
  private static final int DEVICES = 1000;
  private static final int ROUNDS = 7;

  @Test
  void publishesAThousandDevicesInEightSlices() throws Exception {
    BackendDevices mapping =
        BackendDevices.builder()
            .attributes(
                d ->
                    Map.of(
                        "model",
                        "agilex7",
                        "pciAddress",
                        "0000:" + d.id().substring(4) + ":00.0",
                        "firmware",
                        "fw-2.4.1",
                        "virtual",
                        false))
            .capacities(d -> Map.of("memory", "16Gi"))
            .build();
    List<Device> backend = backend(DEVICES);
    List<Device> changedBackend = new ArrayList<>(backend);
    changedBackend.set(
        DEVICES - 1, Device.builder(backend.get(DEVICES - 1).id()).numaNode(0).build());

    long[] map = new long[ROUNDS];
    long[] create = new long[ROUNDS];
    long[] update = new long[ROUNDS];
    long[] same = new long[ROUNDS];
    long[] remove = new long[ROUNDS];
    try (MockApiServer api = new MockApiServer()) {
      api.createNode("node-1");
      for (int round = 0; round < ROUNDS; round++) {
        try (ResourceSlicePublisher publisher =
            ResourceSlicePublisher.builder(api.client, "fpga.example.com", "node-1")
                .coalesceDelay(Duration.ZERO)
                .build()) {
          long t0 = System.nanoTime();
          BackendDevices.Mapping mapped = mapping.map(backend);
          long t1 = System.nanoTime();
          List<io.fabric8.kubernetes.api.model.resource.v1.Device> changed =
              mapping.map(changedBackend).draDevices();
          long t1b = System.nanoTime();
          publisher.publish(mapped.draDevices()).get(60, TimeUnit.SECONDS);
          long t2 = System.nanoTime();
          publisher.publish(changed).get(60, TimeUnit.SECONDS);
          long t3 = System.nanoTime();
          publisher.publish(List.copyOf(changed)).get(60, TimeUnit.SECONDS);
          long t4 = System.nanoTime();

          List<ResourceSlice> slices =
              api.client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems();
          assertThat(mapped.problems()).isEmpty();
          assertThat(slices).hasSize(8);
          assertThat(slices.stream().mapToInt(s -> s.getSpec().getDevices().size()).sum())
              .isEqualTo(DEVICES);
          assertThat(slices)
              .allSatisfy(
                  s -> {
                    assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(8L);
                    assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(2L);
                  });
          assertThat(publisher.stats()).isEqualTo(new ResourceSlicePublisher.Stats(8, 8, 0, 0, 0));

          long t5 = System.nanoTime();
          publisher.removeAll().get(60, TimeUnit.SECONDS);
          long t6 = System.nanoTime();
          assertThat(
                  api.client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems())
              .isEmpty();

          map[round] = t1 - t0;
          create[round] = t2 - t1b;
          update[round] = t3 - t2;
          same[round] = t4 - t3;
          remove[round] = t6 - t5;
        }
      }
    }
    System.out.printf(
        "ResourceSlice publishing, %d devices (8 slices), mock API server over HTTP, %d rounds"
            + " (first is warm-up), median [min..max] ms:%n",
        DEVICES, ROUNDS);
    print("map backend devices", map);
    print("first publish (8 creates)", create);
    print("one device changed (8 updates)", update);
    print("unchanged list (no API call)", same);
    print("removeAll (8 deletes)", remove);
  }

  private static List<Device> backend(int count) {
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String id = String.format("fpga%04d", i);
      devices.add(
          Device.builder(id).numaNode(i % 2).deviceNode(DeviceNode.rw("/dev/" + id)).build());
    }
    return devices;
  }

  private static void print(String what, long[] nanos) {
    long[] measured = Arrays.copyOfRange(nanos, 1, nanos.length);
    Arrays.sort(measured);
    System.out.printf(
        "  %-34s %8.2f [%.2f..%.2f]%n",
        what,
        measured[measured.length / 2] / 1e6,
        measured[0] / 1e6,
        measured[measured.length - 1] / 1e6);
  }
}
