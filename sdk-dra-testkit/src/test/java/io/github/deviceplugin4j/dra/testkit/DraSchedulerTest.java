package io.github.deviceplugin4j.dra.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSetBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTolerationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The test cluster's scheduler against slices and classes written to the mock API server: what the
 * 1.37 scheduler's allocator does for counters, taints, shared capacity, admin access, binding
 * conditions and extended resources, and the errors that say why a claim does not fit.
 */
@DraTest
class DraSchedulerTest {
  private static final String DRIVER = "gpu.example.com";
  DraCluster cluster;

  @BeforeEach
  void aClassForTheDriver() {
    cluster.scheduler().installDeviceClass(DRIVER, "example.com/gpu");
  }

  private void publish(Device... devices) {
    publish(b -> b, devices);
  }

  private void publish(UnaryOperator<ResourceSliceBuilder> extra, Device... devices) {
    ResourceSliceBuilder b =
        new ResourceSliceBuilder()
            .withNewMetadata()
            .withName(cluster.nodeName() + "-" + DRIVER)
            .endMetadata()
            .withNewSpec()
            .withDriver(DRIVER)
            .withNodeName(cluster.nodeName())
            .withNewPool()
            .withName(cluster.nodeName())
            .withGeneration(1L)
            .withResourceSliceCount(1L)
            .endPool()
            .withDevices(devices)
            .endSpec();
    cluster
        .client()
        .dynamicResourceAllocation()
        .v1()
        .resourcesSlices()
        .resource(extra.apply(b).build())
        .create();
  }

  private static DeviceBuilder device(String name, String model) {
    return new DeviceBuilder().withName(name).withAttributes(Map.of("model", attr(model)));
  }

  private static DeviceAttribute attr(String value) {
    DeviceAttribute a = new DeviceAttribute();
    a.setString(value);
    return a;
  }

  private static ResourceClaim claim(
      String name, UnaryOperator<ExactDeviceRequestBuilder> request) {
    return claim("team-a", name, request);
  }

  private static ResourceClaim claim(
      String namespace, String name, UnaryOperator<ExactDeviceRequestBuilder> request) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withNewDevices()
        .addNewRequest()
        .withName("gpu")
        .withExactly(
            request.apply(new ExactDeviceRequestBuilder().withDeviceClassName(DRIVER)).build())
        .endRequest()
        .endDevices()
        .endSpec()
        .build();
  }

  private static List<String> devices(ResourceClaim c) {
    return c.getStatus().getAllocation().getDevices().getResults().stream()
        .map(DeviceRequestAllocationResult::getDevice)
        .toList();
  }

  @Test
  void allocatesTheDevicesTheSelectorsChooseAndStoresTheAllocation() {
    publish(
        device("gpu-0", "a100").build(),
        device("gpu-1", "h100").build(),
        device("gpu-2", "h100").build());

    ResourceClaim c =
        cluster.allocate(
            claim(
                "big",
                r ->
                    r.withCount(2L)
                        .addNewSelector()
                        .withNewCel()
                        .withExpression("device.attributes[\"" + DRIVER + "\"].model == \"h100\"")
                        .endCel()
                        .endSelector()));

    assertThat(devices(c)).containsExactly("gpu-1", "gpu-2");
    assertThat(
            c.getStatus()
                .getAllocation()
                .getNodeSelector()
                .getNodeSelectorTerms()
                .get(0)
                .getMatchFields()
                .get(0)
                .getValues())
        .containsExactly(cluster.nodeName());
    ResourceClaim stored =
        cluster
            .client()
            .dynamicResourceAllocation()
            .v1()
            .resourceClaims()
            .inNamespace("team-a")
            .withName("big")
            .get();
    assertThat(devices(stored)).containsExactly("gpu-1", "gpu-2");
  }

  @Test
  void aDeviceAllocatedToOneClaimIsNotGivenToAnother() {
    publish(device("gpu-0", "a100").build(), device("gpu-1", "a100").build());
    assertThat(devices(cluster.allocate(claim("one", r -> r)))).containsExactly("gpu-0");
    assertThat(devices(cluster.allocate(claim("two", r -> r)))).containsExactly("gpu-1");

    assertThatThrownBy(() -> cluster.allocate(claim("three", r -> r)))
        .isInstanceOf(DraAllocationException.class)
        .hasMessageContaining("team-a/three")
        .hasMessageContaining("needs 1 device(s) of class " + DRIVER)
        .hasMessageContaining("2 match, 0 free, 2 allocated to another claim");
  }

  @Test
  void aCardAndItsPartitionsAreNeverBookedTwiceThroughTheirSharedCounters() {
    publishCardWithTwoHalves();

    assertThat(devices(cluster.allocate(claim("p0", model("half")))))
        .containsExactly("card-0-part-0");
    assertThatThrownBy(() -> cluster.allocate(claim("card", model("whole"))))
        .isInstanceOf(DraAllocationException.class)
        .hasMessageContaining("counter card-0/memory exhausted");
    assertThat(devices(cluster.allocate(claim("p1", model("half")))))
        .containsExactly("card-0-part-1");
  }

  @Test
  void theWholeCardTakesEveryPartitionsCounters() {
    publishCardWithTwoHalves();

    assertThat(devices(cluster.allocate(claim("card", model("whole"))))).containsExactly("card-0");
    assertThatThrownBy(() -> cluster.allocate(claim("p0", model("half"))))
        .hasMessageContaining("2 match, 0 free, 2 counter card-0/memory exhausted");
  }

  @Test
  void aTaintedDeviceGoesOnlyToAClaimThatToleratesIt() {
    publish(
        device("gpu-0", "a100")
            .withTaints(
                new DeviceTaintBuilder()
                    .withKey(DRIVER + "/unhealthy")
                    .withValue("ecc")
                    .withEffect("NoSchedule")
                    .build())
            .build());

    assertThatThrownBy(() -> cluster.allocate(claim("plain", r -> r)))
        .isInstanceOf(DraAllocationException.class)
        .hasMessageContaining("1 tainted " + DRIVER + "/unhealthy=ecc:NoSchedule");

    ResourceClaim c =
        cluster.allocate(
            claim(
                "tolerant",
                r ->
                    r.withTolerations(
                        new DeviceTolerationBuilder()
                            .withKey(DRIVER + "/unhealthy")
                            .withOperator("Exists")
                            .build())));
    assertThat(devices(c)).containsExactly("gpu-0");
    assertThat(c.getStatus().getAllocation().getDevices().getResults().get(0).getTolerations())
        .singleElement()
        .satisfies(t -> assertThat(t.getKey()).isEqualTo(DRIVER + "/unhealthy"));
  }

  @Test
  void aNoExecuteTaintNeedsAToleranceOfItsValueAndEffect() {
    publish(
        device("gpu-0", "a100")
            .withTaints(
                new DeviceTaintBuilder()
                    .withKey("k")
                    .withValue("v")
                    .withEffect("NoExecute")
                    .build())
            .build());
    var wrongValue = new DeviceTolerationBuilder().withKey("k").withValue("w").build();
    assertThatThrownBy(() -> cluster.allocate(claim("wrong", r -> r.withTolerations(wrongValue))))
        .hasMessageContaining("tainted k=v:NoExecute");
    var wrongEffect =
        new DeviceTolerationBuilder().withKey("k").withValue("v").withEffect("NoSchedule").build();
    assertThatThrownBy(() -> cluster.allocate(claim("effect", r -> r.withTolerations(wrongEffect))))
        .hasMessageContaining("tainted k=v:NoExecute");
    var right =
        new DeviceTolerationBuilder().withKey("k").withValue("v").withEffect("NoExecute").build();
    assertThat(devices(cluster.allocate(claim("right", r -> r.withTolerations(right)))))
        .containsExactly("gpu-0");
  }

  @Test
  void aTaintWithEffectNoneDoesNotKeepADeviceFromAClaim() {
    publish(
        device("gpu-0", "a100")
            .withTaints(new DeviceTaintBuilder().withKey("info").withEffect("None").build())
            .build());
    assertThat(devices(cluster.allocate(claim("plain", r -> r)))).containsExactly("gpu-0");
  }

  @Test
  void aPodsClaimTemplateBecomesAClaimReservedForThePod() {
    publish(device("gpu-0", "a100").build());
    cluster
        .client()
        .dynamicResourceAllocation()
        .v1()
        .resourceClaimTemplates()
        .inNamespace("team-a")
        .resource(
            new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder()
                .withNewMetadata()
                .withName("one-gpu")
                .withNamespace("team-a")
                .endMetadata()
                .withNewSpec()
                .withSpec(claim("unused", r -> r).getSpec())
                .endSpec()
                .build())
        .create();
    Pod pod =
        cluster
            .client()
            .pods()
            .inNamespace("team-a")
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName("worker")
                    .withNamespace("team-a")
                    .endMetadata()
                    .withNewSpec()
                    .addNewResourceClaim()
                    .withName("gpu")
                    .withResourceClaimTemplateName("one-gpu")
                    .endResourceClaim()
                    .addNewContainer()
                    .withName("main")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();

    Pod scheduled = cluster.scheduler().schedule("team-a", "worker");

    var statuses = scheduled.getStatus().getResourceClaimStatuses();
    assertThat(statuses).singleElement().satisfies(s -> assertThat(s.getName()).isEqualTo("gpu"));
    String name = statuses.get(0).getResourceClaimName();
    assertThat(name).startsWith("worker-gpu-");
    ResourceClaim claim =
        cluster
            .client()
            .dynamicResourceAllocation()
            .v1()
            .resourceClaims()
            .inNamespace("team-a")
            .withName(name)
            .get();
    assertThat(devices(claim)).containsExactly("gpu-0");
    assertThat(claim.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(pod.getMetadata().getUid()));
  }

  @Test
  void assignWritesTheAllocationTheTestChoseWithoutLookingAtSlices() {
    ResourceClaim c = cluster.assign("team-a", "pinned", "port", DRIVER, "no-such-device");

    assertThat(c.getSpec().getDevices().getRequests())
        .singleElement()
        .satisfies(r -> assertThat(r.getName()).isEqualTo("port"));
    assertThat(c.getStatus().getAllocation().getDevices().getResults())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getPool()).isEqualTo(cluster.nodeName());
              assertThat(r.getDevice()).isEqualTo("no-such-device");
            });
  }

  @Test
  void aSharedDeviceIsAllocatedByCapacityWithAShareIdPerAllocation() {
    DeviceCapacity bandwidth = new DeviceCapacity();
    bandwidth.setValue(new Quantity("10Gi"));
    bandwidth.setRequestPolicy(
        new CapacityRequestPolicyBuilder()
            .withDefault(new Quantity("1Gi"))
            .withNewValidRange()
            .withMin(new Quantity("1Gi"))
            .withStep(new Quantity("1Gi"))
            .endValidRange()
            .build());
    publish(
        device("nic-0", "vf")
            .withAllowMultipleAllocations(true)
            .withCapacity(Map.of("bandwidth", bandwidth))
            .build());

    ResourceClaim first = cluster.allocate(claim("first", bandwidth("2.5Gi")));
    ResourceClaim second = cluster.allocate(claim("second", r -> r)); // the default

    DeviceRequestAllocationResult a =
        first.getStatus().getAllocation().getDevices().getResults().get(0);
    DeviceRequestAllocationResult b =
        second.getStatus().getAllocation().getDevices().getResults().get(0);
    assertThat(a.getDevice()).isEqualTo("nic-0");
    assertThat(b.getDevice()).isEqualTo("nic-0");
    assertThat(Allocator.amount(a.getConsumedCapacity().get("bandwidth")))
        .isEqualByComparingTo(Allocator.amount(new Quantity("3Gi")));
    assertThat(Allocator.amount(b.getConsumedCapacity().get("bandwidth")))
        .isEqualByComparingTo(Allocator.amount(new Quantity("1Gi")));
    assertThat(a.getShareID()).isNotBlank().isNotEqualTo(b.getShareID());

    cluster.allocate(claim("third", bandwidth("6Gi")));
    assertThatThrownBy(() -> cluster.allocate(claim("fourth", bandwidth("1Gi"))))
        .hasMessageContaining("capacity bandwidth exhausted (10737418240 of 10737418240 consumed)");
  }

  @Test
  void aRequestIsRoundedUpToTheNextValidValueAndRefusedAboveTheLargest() {
    DeviceCapacity memory = new DeviceCapacity();
    memory.setValue(new Quantity("16Gi"));
    memory.setRequestPolicy(
        new CapacityRequestPolicyBuilder()
            .withValidValues(new Quantity("2Gi"), new Quantity("4Gi"), new Quantity("8Gi"))
            .build());
    publish(
        device("gpu-0", "a100")
            .withAllowMultipleAllocations(true)
            .withCapacity(Map.of("memory", memory))
            .build());

    ResourceClaim c =
        cluster.allocate(
            claim(
                "three",
                r ->
                    r.withNewCapacity()
                        .withRequests(Map.of("memory", new Quantity("3Gi")))
                        .endCapacity()));
    assertThat(
            Allocator.amount(
                c.getStatus()
                    .getAllocation()
                    .getDevices()
                    .getResults()
                    .get(0)
                    .getConsumedCapacity()
                    .get("memory")))
        .isEqualByComparingTo(Allocator.amount(new Quantity("4Gi")));
    assertThatThrownBy(
            () ->
                cluster.allocate(
                    claim(
                        "nine",
                        r ->
                            r.withNewCapacity()
                                .withRequests(Map.of("memory", new Quantity("9Gi")))
                                .endCapacity())))
        .hasMessageContaining("capacity request outside the device's request policy");
  }

  @Test
  void adminAccessNeedsTheNamespaceLabelAndMayUseAnAllocatedDevice() {
    publish(device("gpu-0", "a100").build());
    cluster.allocate(claim("owner", r -> r));

    assertThatThrownBy(() -> cluster.allocate(claim("monitor", r -> r.withAdminAccess(true))))
        .isInstanceOf(DraAllocationException.class)
        .hasMessageContaining(
            "needs the label resource.kubernetes.io/admin-access=true on namespace team-a");

    createAdminNamespace("monitoring");
    ResourceClaim admin =
        cluster.allocate(claim("monitoring", "monitor", r -> r.withAdminAccess(true)));
    assertThat(devices(admin)).containsExactly("gpu-0");
    assertThat(admin.getStatus().getAllocation().getDevices().getResults().get(0).getAdminAccess())
        .isTrue();
  }

  @Test
  void anAdminClaimDoesNotTakeTheDeviceFromOrdinaryClaims() {
    publish(device("gpu-0", "a100").build());
    createAdminNamespace("monitoring");
    cluster.allocate(claim("monitoring", "monitor", r -> r.withAdminAccess(true)));

    assertThat(devices(cluster.allocate(claim("owner", r -> r)))).containsExactly("gpu-0");
  }

  @Test
  void bindingConditionsAreCopiedIntoTheResultWithAnAllocationTimestamp() {
    publish(
        device("gpu-0", "a100")
            .withBindsToNode(true)
            .withBindingConditions("attached")
            .withBindingFailureConditions("attach-failed")
            .build());

    ResourceClaim c = cluster.allocate(claim("bound", r -> r));

    var result = c.getStatus().getAllocation().getDevices().getResults().get(0);
    assertThat(result.getBindingConditions()).containsExactly("attached");
    assertThat(result.getBindingFailureConditions()).containsExactly("attach-failed");
    assertThat(c.getStatus().getAllocation().getAllocationTimestamp()).isNotBlank();
  }

  @Test
  void allModeTakesEveryMatchingDevice() {
    publish(device("gpu-0", "a100").build(), device("gpu-1", "a100").build());
    assertThat(devices(cluster.allocate(claim("all", r -> r.withAllocationMode("All")))))
        .containsExactly("gpu-0", "gpu-1");
  }

  @Test
  void aMatchAttributeConstraintBacktracksToDevicesThatShareTheValue() {
    publish(numa("gpu-0", 0), numa("gpu-1", 1), numa("gpu-2", 1));
    ResourceClaim c =
        cluster.allocate(
            new ResourceClaimBuilder()
                .withNewMetadata()
                .withName("pair")
                .withNamespace("team-a")
                .endMetadata()
                .withNewSpec()
                .withNewDevices()
                .addNewRequest()
                .withName("a")
                .withNewExactly()
                .withDeviceClassName(DRIVER)
                .endExactly()
                .endRequest()
                .addNewRequest()
                .withName("b")
                .withNewExactly()
                .withDeviceClassName(DRIVER)
                .endExactly()
                .endRequest()
                .addNewConstraint()
                .withMatchAttribute(DRIVER + "/numa")
                .endConstraint()
                .endDevices()
                .endSpec()
                .build());

    // gpu-0 first, then no partner on NUMA node 0: the search goes back and takes 1 and 2.
    assertThat(devices(c)).containsExactly("gpu-1", "gpu-2");
  }

  private static Device numa(String name, long node) {
    DeviceAttribute a = new DeviceAttribute();
    a.setInt(node);
    return new DeviceBuilder().withName(name).withAttributes(Map.of("numa", a)).build();
  }

  @Test
  void firstAvailableTakesTheFirstSubrequestThatFits() {
    publish(device("gpu-0", "a100").build());
    ResourceClaim c =
        cluster.allocate(
            new ResourceClaimBuilder()
                .withNewMetadata()
                .withName("prioritized")
                .withNamespace("team-a")
                .endMetadata()
                .withNewSpec()
                .withNewDevices()
                .addNewRequest()
                .withName("gpu")
                .addNewFirstAvailable()
                .withName("big")
                .withDeviceClassName(DRIVER)
                .withCount(2L)
                .endFirstAvailable()
                .addNewFirstAvailable()
                .withName("small")
                .withDeviceClassName(DRIVER)
                .endFirstAvailable()
                .endRequest()
                .endDevices()
                .endSpec()
                .build());
    assertThat(c.getStatus().getAllocation().getDevices().getResults())
        .singleElement()
        .satisfies(r -> assertThat(r.getRequest()).isEqualTo("gpu/small"));
  }

  @Test
  void aMissingClassAndAMissingAttributeAreNamed() {
    publish(device("gpu-0", "a100").build());
    assertThatThrownBy(() -> cluster.allocate(claim("x", r -> r.withDeviceClassName("nope"))))
        .hasMessageContaining("names DeviceClass \"nope\", which does not exist");
    assertThatThrownBy(
            () ->
                cluster.allocate(
                    claim(
                        "y",
                        r ->
                            r.addNewSelector()
                                .withNewCel()
                                .withExpression(
                                    "device.attributes[\"" + DRIVER + "\"].color == \"red\"")
                                .endCel()
                                .endSelector())))
        .hasMessageContaining("no such key: color");
  }

  @Test
  void aPodAskingForTheClassesExtendedResourceGetsASpecialClaimAndItsStatus() {
    publish(device("gpu-0", "a100").build(), device("gpu-1", "a100").build());
    Pod pod =
        createPod(
            "trainer", Map.of("cpu", new Quantity("1"), "example.com/gpu", new Quantity("2")));

    Pod scheduled = cluster.scheduler().schedule("team-a", "trainer");

    var status = scheduled.getStatus().getExtendedResourceClaimStatus();
    assertThat(status.getResourceClaimName()).startsWith("trainer-extended-resources-");
    assertThat(status.getRequestMappings())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getContainerName()).isEqualTo("main");
              assertThat(m.getResourceName()).isEqualTo("example.com/gpu");
              // cpu sorts first among the container's requests: the GPU is index 1.
              assertThat(m.getRequestName()).isEqualTo("container-0-request-1");
            });
    assertThat(scheduled.getSpec().getNodeName()).isEqualTo(cluster.nodeName());
    ResourceClaim claim =
        cluster
            .client()
            .dynamicResourceAllocation()
            .v1()
            .resourceClaims()
            .inNamespace("team-a")
            .withName(status.getResourceClaimName())
            .get();
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry(DraScheduler.EXTENDED_RESOURCE_CLAIM_ANNOTATION, "true");
    assertThat(claim.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(pod.getMetadata().getUid()));
    assertThat(devices(claim)).containsExactly("gpu-0", "gpu-1");
    assertThat(claim.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getName()).isEqualTo("trainer"));
  }

  @Test
  void anExtendedResourceTheNodeServesThroughADevicePluginGetsNoClaim() {
    publish(device("gpu-0", "a100").build());
    cluster
        .client()
        .nodes()
        .resource(
            new NodeBuilder(cluster.client().nodes().withName(cluster.nodeName()).get())
                .withNewStatus()
                .withAllocatable(Map.of("example.com/gpu", new Quantity("4")))
                .endStatus()
                .build())
        .updateStatus();
    createPod("legacy", Map.of("example.com/gpu", new Quantity("1")));

    Pod scheduled = cluster.scheduler().schedule("team-a", "legacy");

    assertThat(
            scheduled.getStatus() == null
                ? null
                : scheduled.getStatus().getExtendedResourceClaimStatus())
        .isNull();
    assertThat(
            cluster
                .client()
                .dynamicResourceAllocation()
                .v1()
                .resourceClaims()
                .inNamespace("team-a")
                .list()
                .getItems())
        .isEmpty();
  }

  /** A card whose counter set its whole device and its two halves consume. */
  private void publishCardWithTwoHalves() {
    Map<String, Counter> whole = Map.of("memory", counter("40Gi"));
    Map<String, Counter> half = Map.of("memory", counter("20Gi"));
    publish(
        b ->
            b.editSpec()
                .withSharedCounters(
                    new CounterSetBuilder().withName("card-0").withCounters(whole).build())
                .endSpec(),
        partition("card-0", "whole", whole),
        partition("card-0-part-0", "half", half),
        partition("card-0-part-1", "half", half));
  }

  private static Device partition(String name, String model, Map<String, Counter> consumes) {
    return device(name, model)
        .addNewConsumesCounter()
        .withCounterSet("card-0")
        .withCounters(consumes)
        .endConsumesCounter()
        .build();
  }

  /** A namespace with the label upstream requires for claims with admin access. */
  private void createAdminNamespace(String name) {
    cluster
        .client()
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(Map.of(Allocator.ADMIN_ACCESS_LABEL, "true"))
                .endMetadata()
                .build())
        .create();
  }

  /** A pod with one container "main" that asks for the given resources. */
  private Pod createPod(String name, Map<String, Quantity> requests) {
    return cluster
        .client()
        .pods()
        .inNamespace("team-a")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("team-a")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("main")
                .withNewResources()
                .withRequests(requests)
                .endResources()
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  private static UnaryOperator<ExactDeviceRequestBuilder> model(String model) {
    return r ->
        r.addNewSelector()
            .withNewCel()
            .withExpression("device.attributes[\"" + DRIVER + "\"].model == \"" + model + "\"")
            .endCel()
            .endSelector();
  }

  private static UnaryOperator<ExactDeviceRequestBuilder> bandwidth(String amount) {
    return r ->
        r.withNewCapacity().withRequests(Map.of("bandwidth", new Quantity(amount))).endCapacity();
  }

  private static Counter counter(String value) {
    Counter c = new Counter();
    c.setValue(new Quantity(value));
    return c;
  }
}
