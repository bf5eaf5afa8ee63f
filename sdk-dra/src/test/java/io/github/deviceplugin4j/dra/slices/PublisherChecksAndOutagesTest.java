package io.github.deviceplugin4j.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumptionBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the publisher writes is checked first, taints fall back, and writes outlive an outage. */
class PublisherChecksAndOutagesTest {
  private static final String DRIVER = "fpga.example.com";
  private static final String NODE = "node-1";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  private MockApiServer api;
  private ResourceSlicePublisher publisher;
  private KubernetesClient client;

  @BeforeEach
  void start() {
    api = new MockApiServer();
    api.createNode(NODE);
    // The client's own retries of a 503 (ten by default, up to 51 s apart) are cut to one, so
    // the publisher's backoff is what brings the write through.
    client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(api.client.getConfiguration())
                    .withRequestRetryBackoffLimit(1)
                    .withRequestRetryBackoffInterval(10)
                    .build())
            .build();
    publisher =
        ResourceSlicePublisher.builder(client, DRIVER, NODE)
            .coalesceDelay(Duration.ZERO)
            .backoff(Duration.ofMillis(10), Duration.ofMillis(200))
            .build();
  }

  @AfterEach
  void stop() {
    api.down.set(false);
    publisher.close();
    client.close();
    api.close();
  }

  private List<ResourceSlice> slices() {
    List<ResourceSlice> items =
        new ArrayList<>(
            api.client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems());
    items.sort(Comparator.comparing(s -> s.getMetadata().getName()));
    return items;
  }

  private List<Device> publishedDevices() {
    return slices().stream().flatMap(s -> s.getSpec().getDevices().stream()).toList();
  }

  private static void done(CompletableFuture<Void> f) throws Exception {
    f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static Device tainted(String name, String effect) {
    return new DeviceBuilder()
        .withName(name)
        .withTaints(new DeviceTaint(effect, DRIVER + "/unhealthy", null, "fan-failed"))
        .build();
  }

  @Test
  void aDeviceTheApiServerWouldRefuse_isLeftOut_andTheOthersArePublished() throws Exception {
    Device bad = new DeviceBuilder().withName("Not_A_Label").build();
    Device good = new DeviceBuilder().withName("good").build();

    done(publisher.publish(List.of(bad, good)));

    assertThat(publishedDevices()).extracting(Device::getName).containsExactly("good");
  }

  @Test
  void aDeviceConsumingAnUnpublishedCounterSet_isLeftOut() throws Exception {
    Device orphan =
        new DeviceBuilder()
            .withName("port-0")
            .withConsumesCounters(
                new DeviceCounterConsumptionBuilder()
                    .withCounterSet("card-9")
                    .withCounters(Map.of("ports", new Counter(new Quantity("1"))))
                    .build())
            .build();

    done(publisher.publish(List.of(orphan, new DeviceBuilder().withName("card-0").build())));

    assertThat(publishedDevices()).extracting(Device::getName).containsExactly("card-0");
  }

  @Test
  void sharedCounters_goIntoASliceOfTheirOwn_beforeTheDevices() throws Exception {
    CounterSet card = new CounterSet(Map.of("ports", new Counter(new Quantity("2"))), "card-0");
    Device port =
        new DeviceBuilder()
            .withName("port-0")
            .withConsumesCounters(
                new DeviceCounterConsumptionBuilder()
                    .withCounterSet("card-0")
                    .withCounters(Map.of("ports", new Counter(new Quantity("1"))))
                    .build())
            .build();

    done(publisher.publish(List.of(card), List.of(port)));

    List<ResourceSlice> slices = slices();
    assertThat(slices).hasSize(2);
    assertThat(slices.get(0).getSpec().getSharedCounters())
        .extracting(CounterSet::getName)
        .containsExactly("card-0");
    assertThat(slices.get(0).getSpec().getDevices()).isEmpty();
    assertThat(slices.get(1).getSpec().getDevices())
        .extracting(Device::getName)
        .containsExactly("port-0");
    assertThat(slices)
        .allSatisfy(s -> assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(2L));
  }

  @Test
  void taintedDevices_fillSlicesOfAtMost64() throws Exception {
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < 65; i++) {
      devices.add(tainted(String.format("dev-%03d", i), "NoSchedule"));
    }

    done(publisher.publish(devices));

    assertThat(slices()).extracting(s -> s.getSpec().getDevices().size()).containsExactly(64, 1);
  }

  @Test
  void whenTheApiServerDropsTaints_taintedDevicesAreLeftOut() throws Exception {
    api.dropTaints.set(true);

    done(
        publisher.publish(
            List.of(tainted("sick", "NoSchedule"), new DeviceBuilder().withName("well").build())));

    assertThat(publisher.taintsSupported()).isFalse();
    assertThat(publishedDevices()).extracting(Device::getName).containsExactly("well");
  }

  @Test
  void whenTheApiServerKeepsTaints_theTaintedDeviceStaysWithItsTaint() throws Exception {
    done(
        publisher.publish(
            List.of(tainted("sick", "NoExecute"), new DeviceBuilder().withName("well").build())));

    assertThat(publisher.taintsSupported()).isTrue();
    assertThat(publishedDevices())
        .filteredOn(d -> d.getName().equals("sick"))
        .singleElement()
        .satisfies(
            d ->
                assertThat(d.getTaints())
                    .singleElement()
                    .satisfies(
                        t -> {
                          assertThat(t.getKey()).isEqualTo(DRIVER + "/unhealthy");
                          assertThat(t.getEffect()).isEqualTo("NoExecute");
                        }));
  }

  @Test
  void changesMadeWhileTheApiServerIsAway_landWhenItIsBack_latestFirst() throws Exception {
    done(publisher.publish(List.of(new DeviceBuilder().withName("dev-a").build())));
    api.down.set(true);

    CompletableFuture<Void> first = publisher.publish(List.of(tainted("dev-a", "NoSchedule")));
    await().atMost(WAIT).until(() -> api.refused.get() > 0);
    CompletableFuture<Void> latest =
        publisher.publish(
            List.of(
                new DeviceBuilder().withName("dev-a").build(),
                new DeviceBuilder().withName("dev-b").build()));
    int refusedSoFar = api.refused.get();
    await().atMost(WAIT).until(() -> api.refused.get() > refusedSoFar);
    assertThat(first).isNotDone();

    api.down.set(false);

    done(latest);
    assertThat(first).isDone();
    assertThat(publishedDevices()).extracting(Device::getName).containsExactly("dev-a", "dev-b");
    assertThat(publishedDevices()).allSatisfy(d -> assertThat(d.getTaints()).isEmpty());
  }
}
