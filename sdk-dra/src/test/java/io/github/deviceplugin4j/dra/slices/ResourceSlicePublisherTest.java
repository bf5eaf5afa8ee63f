package io.github.deviceplugin4j.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ResourceSlicePublisherTest {
  private static final String DRIVER = "fpga.example.com";
  private static final String NODE = "node-1";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  private MockApiServer api;
  private Node node;
  private ResourceSlicePublisher publisher;

  @BeforeEach
  void startApiServer() {
    api = new MockApiServer();
    node = api.createNode(NODE);
  }

  @AfterEach
  void stop() {
    if (publisher != null) {
      publisher.close();
    }
    api.close();
  }

  private ResourceSlicePublisher publisher() {
    publisher =
        ResourceSlicePublisher.builder(api.client, DRIVER, NODE)
            .coalesceDelay(Duration.ZERO)
            .backoff(Duration.ofMillis(10), Duration.ofMillis(200))
            .build();
    return publisher;
  }

  static List<Device> devices(int count) {
    List<Device> list = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      list.add(new DeviceBuilder().withName(String.format("dev-%04d", i)).build());
    }
    return list;
  }

  private List<ResourceSlice> slices() {
    List<ResourceSlice> items =
        new ArrayList<>(
            api.client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems());
    items.sort(Comparator.comparing(s -> s.getMetadata().getName()));
    return items;
  }

  private static void done(CompletableFuture<Void> future) throws Exception {
    future.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Test
  void aHundredAndTwentyNineDevicesMakeTwoSlicesOfOnePool() throws Exception {
    done(publisher().publish(devices(129)));

    List<ResourceSlice> slices = slices();
    assertThat(slices)
        .extracting(s -> s.getMetadata().getName())
        .containsExactly("00000-fpga.example.com-node-1", "00001-fpga.example.com-node-1");
    assertThat(slices.get(0).getSpec().getDevices()).hasSize(128);
    assertThat(slices.get(1).getSpec().getDevices())
        .extracting(Device::getName)
        .containsExactly("dev-0128");
    assertThat(slices)
        .allSatisfy(
            s -> {
              assertThat(s.getSpec().getDriver()).isEqualTo(DRIVER);
              assertThat(s.getSpec().getNodeName()).isEqualTo(NODE);
              assertThat(s.getSpec().getPool().getName()).isEqualTo(NODE);
              assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(2L);
              assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(1L);
              assertThat(s.getMetadata().getOwnerReferences())
                  .singleElement()
                  .satisfies(
                      o -> {
                        assertThat(o.getKind()).isEqualTo("Node");
                        assertThat(o.getApiVersion()).isEqualTo("v1");
                        assertThat(o.getName()).isEqualTo(NODE);
                        assertThat(o.getUid()).isEqualTo(node.getMetadata().getUid()).isNotBlank();
                        assertThat(o.getController()).isTrue();
                      });
            });
    assertThat(publisher.stats().creates()).isEqualTo(2);
  }

  @Test
  void aChangeBumpsTheGenerationOfEverySliceOfThePool() throws Exception {
    done(publisher().publish(devices(130)));

    List<Device> changed = devices(130);
    changed.set(
        129, new DeviceBuilder(changed.get(129)).withAllowMultipleAllocations(true).build());
    done(publisher.publish(changed));

    assertThat(slices())
        .hasSize(2)
        .allSatisfy(s -> assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(2L));
    assertThat(slices().get(1).getSpec().getDevices().get(1).getAllowMultipleAllocations())
        .isTrue();
    assertThat(publisher.stats().updates()).isEqualTo(2);
  }

  @Test
  void aSliceDeletedBySomeoneElseIsRestoredFromTheWatchNotFromThePeriodicResync() throws Exception {
    done(publisher().publish(devices(3)));
    String name = slices().get(0).getMetadata().getName();

    // What a 1.32+ kubelet does at start (wipeResourceSlices); the resync interval is 10 minutes.
    api.client.dynamicResourceAllocation().v1().resourcesSlices().withName(name).delete();

    await().atMost(WAIT).until(() -> slices().size() == 1);
    assertThat(slices().get(0).getSpec().getDevices()).hasSize(3);
    await().atMost(WAIT).until(() -> publisher.stats().creates() == 2);
    assertThat(publisher.repairs()).isEqualTo(1);
  }

  @Test
  void thePublishersOwnWritesStartNoRepair() throws Exception {
    done(publisher().publish(devices(3)));
    done(publisher.publish(devices(5)));
    done(publisher.removeAll());
    done(publisher.publish(devices(1)));
    // A sentinel: a slice deleted by someone else is repaired, and only after the writes above.
    api.client.dynamicResourceAllocation().v1().resourcesSlices().delete();
    await().atMost(WAIT).until(() -> publisher.repairs() >= 1);
    await().atMost(WAIT).until(() -> slices().size() == 1);

    assertThat(publisher.repairs()).isEqualTo(1);
  }

  @Test
  void theSameDevicesAgainInAnotherOrderWriteNothing() throws Exception {
    done(publisher().publish(devices(3)));
    int requests = api.server.getRequestCount();
    String version = slices().get(0).getMetadata().getResourceVersion();
    int afterRead = api.server.getRequestCount();

    List<Device> shuffled = devices(3);
    Collections.reverse(shuffled);
    done(publisher.publish(shuffled));

    assertThat(api.server.getRequestCount()).isEqualTo(afterRead);
    assertThat(afterRead).isEqualTo(requests + 1);
    assertThat(publisher.stats().writes()).isEqualTo(1);
    assertThat(slices().get(0).getMetadata().getResourceVersion()).isEqualTo(version);
  }

  @Test
  void aResyncThatFindsThePoolAsWantedWritesNothing() throws Exception {
    done(publisher().publish(devices(200)));
    String versions = versions();

    done(publisher.resync());

    assertThat(publisher.stats().writes()).isEqualTo(2);
    assertThat(versions()).isEqualTo(versions);
  }

  @Test
  void aSliceDeletedBySomeoneElseIsRestoredOnResync() throws Exception {
    done(publisher().publish(devices(200)));
    api.client
        .dynamicResourceAllocation()
        .v1()
        .resourcesSlices()
        .withName(ResourceSlicePublisher.sliceName(DRIVER, NODE, 1))
        .delete();

    done(publisher.resync());

    assertThat(slices())
        .hasSize(2)
        .allSatisfy(s -> assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(2L));
  }

  @Test
  void aShrinkingPoolDeletesTheSlicesNoLongerNeeded() throws Exception {
    done(publisher().publish(devices(300)));
    assertThat(slices()).hasSize(3);

    done(publisher.publish(devices(5)));

    assertThat(slices())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
              assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(2L);
              assertThat(s.getSpec().getDevices()).hasSize(5);
            });
    assertThat(publisher.stats().deletes()).isEqualTo(2);
  }

  @Test
  void anEmptyDeviceListPublishesOneEmptySlice() throws Exception {
    done(publisher().publish(List.of()));

    assertThat(slices())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
              assertThat(s.getSpec().getDevices()).isNullOrEmpty();
            });
  }

  @Test
  void aConflictIsRetriedUntilTheSliceIsWritten() throws Exception {
    done(publisher().publish(devices(3)));
    String name = ResourceSlicePublisher.sliceName(DRIVER, NODE, 0);
    api.server
        .expect()
        .put()
        .withPath("/apis/resource.k8s.io/v1/resourceslices/" + name)
        .andReturn(
            409,
            new StatusBuilder()
                .withStatus("Failure")
                .withReason("Conflict")
                .withCode(409)
                .withMessage("the object has been modified")
                .build())
        .once();

    done(publisher.publish(devices(4)));

    assertThat(publisher.stats().conflicts()).isEqualTo(1);
    assertThat(slices())
        .singleElement()
        .satisfies(s -> assertThat(s.getSpec().getDevices()).hasSize(4));
  }

  @Test
  void aSliceWhoseLabelsWereRemovedIsTakenOverNotDuplicated() throws Exception {
    // The create-then-take-over path alone: with the watch on, the label edit would also start a
    // repair, racing with the publish below for the same takeover.
    publisher =
        ResourceSlicePublisher.builder(api.client, DRIVER, NODE)
            .coalesceDelay(Duration.ZERO)
            .backoff(Duration.ofMillis(10), Duration.ofMillis(200))
            .watchSlices(false)
            .build();
    done(publisher.publish(devices(3)));
    String name = ResourceSlicePublisher.sliceName(DRIVER, NODE, 0);
    api.client
        .dynamicResourceAllocation()
        .v1()
        .resourcesSlices()
        .withName(name)
        .edit(
            s -> new ResourceSliceBuilder(s).editMetadata().withLabels(null).endMetadata().build());

    done(publisher.publish(devices(4)));

    assertThat(slices())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getMetadata().getName()).isEqualTo(name);
              assertThat(s.getSpec().getDevices()).hasSize(4);
              assertThat(s.getMetadata().getLabels())
                  .containsEntry(ResourceSlicePublisher.DRIVER_LABEL, DRIVER);
            });
    assertThat(publisher.stats().conflicts()).isZero();
    assertThat(publisher.stats().creates()).isEqualTo(1);
    assertThat(publisher.stats().updates()).isEqualTo(1);
  }

  @Test
  void rapidUpdatesAreCoalescedAndTheLastOneWins() throws Exception {
    publisher =
        ResourceSlicePublisher.builder(api.client, DRIVER, NODE)
            .coalesceDelay(Duration.ofMillis(300))
            .build();
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (int i = 1; i <= 20; i++) {
      futures.add(publisher.publish(devices(i)));
    }
    for (CompletableFuture<Void> f : futures) {
      done(f);
    }

    assertThat(slices())
        .singleElement()
        .satisfies(s -> assertThat(s.getSpec().getDevices()).hasSize(20));
    long syncs = slices().get(0).getSpec().getPool().getGeneration();
    assertThat(syncs).isLessThan(20);
  }

  @Test
  void removeAllLeavesNoSliceOfThePoolAndOthersAlone() throws Exception {
    ResourceSlice other =
        new ResourceSliceBuilder()
            .withNewMetadata()
            .withName("other-driver-slice")
            .addToLabels(ResourceSlicePublisher.DRIVER_LABEL, "gpu.example.com")
            .endMetadata()
            .withNewSpec()
            .withDriver("gpu.example.com")
            .withNodeName(NODE)
            .withNewPool()
            .withName(NODE)
            .withGeneration(1L)
            .withResourceSliceCount(1L)
            .endPool()
            .endSpec()
            .build();
    api.client.dynamicResourceAllocation().v1().resourcesSlices().resource(other).create();
    done(publisher().publish(devices(300)));

    done(publisher.removeAll());

    assertThat(slices())
        .extracting(s -> s.getMetadata().getName())
        .containsExactly("other-driver-slice");
  }

  @Test
  void closeRemovesThePoolOnlyWhenAskedTo() throws Exception {
    publisher().publish(devices(2)).get(20, TimeUnit.SECONDS);
    publisher.close();
    assertThat(slices()).hasSize(1);

    publisher =
        ResourceSlicePublisher.builder(api.client, DRIVER, NODE)
            .coalesceDelay(Duration.ZERO)
            .removeOnClose(true)
            .build();
    publisher.close();
    assertThat(slices()).isEmpty();
  }

  @Test
  void aMissingNodeIsRetriedUntilItExists() throws Exception {
    publisher =
        ResourceSlicePublisher.builder(api.client, DRIVER, "node-2")
            .coalesceDelay(Duration.ZERO)
            .backoff(Duration.ofMillis(10), Duration.ofMillis(100))
            .build();
    CompletableFuture<Void> published = publisher.publish(devices(1));

    await().atMost(WAIT).until(() -> publisher.stats().failures() >= 2);
    assertThat(published).isNotDone();
    Node node2 = api.createNode("node-2");

    done(published);
    assertThat(slices())
        .singleElement()
        .satisfies(
            s ->
                assertThat(s.getMetadata().getOwnerReferences().get(0).getUid())
                    .isEqualTo(node2.getMetadata().getUid()));
  }

  @Test
  void closingFailsWhatWasNotPublishedAndRefusesMore() {
    publisher =
        ResourceSlicePublisher.builder(api.client, DRIVER, "node-missing")
            .coalesceDelay(Duration.ZERO)
            .backoff(Duration.ofMillis(10), Duration.ofMillis(100))
            .build();
    CompletableFuture<Void> published = publisher.publish(devices(1));
    await().atMost(WAIT).until(() -> publisher.stats().failures() >= 1);

    publisher.close();

    assertThat(published).isCompletedExceptionally();
    assertThatThrownBy(() -> publisher.publish(devices(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void aGivenNodeUidIsUsedWithoutReadingTheNode() throws Exception {
    publisher =
        ResourceSlicePublisher.builder(api.client, DRIVER, "node-3")
            .nodeUid("uid-3")
            .coalesceDelay(Duration.ZERO)
            .build();

    done(publisher.publish(devices(1)));

    assertThat(slices().get(0).getMetadata().getOwnerReferences().get(0).getUid())
        .isEqualTo("uid-3");
  }

  @Test
  void devicesWithoutUniqueNamesAreRefusedWithTheName() {
    List<Device> twice = List.of(devices(1).get(0), devices(1).get(0));

    assertThatThrownBy(() -> publisher().publish(twice))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'dev-0000'")
        .hasMessageContaining("twice");
  }

  @Test
  void badDriverOrNodeNamesAreRefusedWithWhatToUse() {
    assertThatThrownBy(() -> ResourceSlicePublisher.builder(api.client, "Bad_Driver", NODE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'Bad_Driver'")
        .hasMessageContaining("DNS subdomain");
    assertThatThrownBy(() -> ResourceSlicePublisher.builder(api.client, DRIVER, ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spec.nodeName");
  }

  @Test
  void sliceNamesStayValidForTheLongestNodeNames() {
    String longNode = ("n".repeat(60) + ".").repeat(4) + "x";
    String name = ResourceSlicePublisher.sliceName(DRIVER, longNode, 2);

    assertThat(name).hasSizeLessThanOrEqualTo(253).startsWith("00002-fpga.example.com-");
    assertThat(
            Pattern.matches(
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", name))
        .isTrue();
    assertThat(ResourceSlicePublisher.sliceName(DRIVER, longNode + "y", 2)).isNotEqualTo(name);
  }

  @Test
  void capacitiesEqualInValueAreTheSameDevice() {
    Device a =
        new DeviceBuilder()
            .withName("d")
            .addToCapacity(
                "memory",
                new io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity(
                    null, new io.fabric8.kubernetes.api.model.Quantity("1024Mi")))
            .build();
    Device b =
        new DeviceBuilder(a)
            .addToCapacity(
                "memory",
                new io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity(
                    null, new io.fabric8.kubernetes.api.model.Quantity("1Gi")))
            .build();
    Device c =
        new DeviceBuilder(a)
            .addToCapacity(
                "memory",
                new io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity(
                    null, new io.fabric8.kubernetes.api.model.Quantity("2Gi")))
            .build();

    assertThat(ResourceSlicePublisher.sameDevices(List.of(a), List.of(b))).isTrue();
    assertThat(ResourceSlicePublisher.sameDevices(List.of(a), List.of(c))).isFalse();
  }

  private String versions() {
    StringBuilder sb = new StringBuilder();
    slices().forEach(s -> sb.append(s.getMetadata().getResourceVersion()).append(','));
    return sb.toString();
  }
}
