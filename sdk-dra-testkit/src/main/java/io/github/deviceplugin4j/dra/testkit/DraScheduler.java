package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequest;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodExtendedResourceClaimStatus;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimList;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.math.BigDecimal;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The scheduler's DRA part for one node, against any API server (the {@link DraTest @DraTest}
 * cluster's through {@link DraCluster#scheduler()}, or a mock server a test or the demo started
 * itself): allocates claims from the ResourceSlices and DeviceClasses stored there like the 1.37
 * scheduler's structured allocator, creates the claim for a pod's extended resources like the 1.34+
 * scheduler, or writes an allocation a test chose by hand.
 *
 * <pre>{@code
 * DraScheduler scheduler = DraScheduler.forNode(client, "node-1");
 * ResourceClaim claim =
 *     scheduler.allocate(
 *         new ResourceClaimBuilder()
 *             .withNewMetadata().withName("accel").withNamespace("team-a").endMetadata()
 *             .withNewSpec().withNewDevices()
 *             .addNewRequest().withName("port")
 *             .withNewExactly().withDeviceClassName("fpga.example.com").endExactly()
 *             .endRequest()
 *             .endDevices().endSpec()
 *             .build());
 * }</pre>
 *
 * <p>What the allocator does like upstream: requests in order, devices in slice order, with
 * backtracking; {@code exactly} ({@code ExactCount} with {@code count}, {@code All}) and {@code
 * firstAvailable}; class and request selectors in the CEL subset the testkit evaluates (driver,
 * attributes, capacity, comparisons, {@code &&}/{@code ||}/{@code !}, {@code in}, {@code
 * quantity()}); {@code matchAttribute}/{@code distinctAttribute} constraints; only a pool's newest
 * generation; shared counters (a card and its partitions are never booked twice); device taints
 * with {@code NoSchedule}/{@code NoExecute} against the request's tolerations (copied into the
 * result); {@code allowMultipleAllocations} devices with consumable capacity (request policy
 * default, valid values, valid range with step; a {@code shareID} and {@code consumedCapacity} per
 * allocation); admin access (the namespace must carry {@code
 * resource.kubernetes.io/admin-access=true}; such requests may take devices already allocated, and
 * take nothing from others); binding conditions copied into the result with an allocation
 * timestamp; the class's and the claim's configuration; a node selector for node-local devices. Not
 * modelled: the rest of CEL ({@code semver}, macros, lists), scoring (the first fit wins), {@code
 * DeviceTaintRule}s, node selectors on slices, incomplete or invalid pools, binding-condition
 * timeouts, compatibility groups, prioritized lists' scoring.
 */
public final class DraScheduler {
  /** The annotation that marks the claim the scheduler creates for a pod's extended resources. */
  public static final String EXTENDED_RESOURCE_CLAIM_ANNOTATION =
      "resource.kubernetes.io/extended-resource-claim";

  /** The implicit extended resource name of every DeviceClass: this prefix plus its name. */
  public static final String IMPLICIT_EXTENDED_RESOURCE_PREFIX =
      "deviceclass.resource.kubernetes.io/";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final KubernetesClient client;
  private final String nodeName;
  private final Supplier<String> shareIds;

  private DraScheduler(KubernetesClient client, String nodeName, Supplier<String> shareIds) {
    this.client = client;
    this.nodeName = nodeName;
    this.shareIds = shareIds;
  }

  /**
   * A scheduler that places everything on one node.
   *
   * @param client a client of the API server that holds the slices, classes and claims
   * @param nodeName the node: only its slices (and those for all nodes) are used
   * @return the scheduler
   */
  public static DraScheduler forNode(KubernetesClient client, String nodeName) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(nodeName, "nodeName");
    return new DraScheduler(client, nodeName, Allocator::newShareId);
  }

  /**
   * The node this scheduler places claims on.
   *
   * @return the node name
   */
  public String nodeName() {
    return nodeName;
  }

  /**
   * Stores the DeviceClass a driver's manifests usually ship, named like the driver, that selects
   * every device of the driver ({@code device.driver == "<driver>"}): what a cluster admin installs
   * before claims can name it.
   *
   * @param driver the driver name, also the class's name
   * @return the class as stored
   */
  public DeviceClass installDeviceClass(String driver) {
    return installDeviceClass(driver, null);
  }

  /**
   * Like {@link #installDeviceClass(String)}, with {@code extendedResourceName} set: pods that ask
   * for that extended resource get their devices through DRA (see {@link #schedule}).
   *
   * @param driver the driver name, also the class's name
   * @param extendedResourceName e.g. {@code example.com/fpga}, or null for none
   * @return the class as stored
   */
  public DeviceClass installDeviceClass(String driver, String extendedResourceName) {
    Objects.requireNonNull(driver, "driver");
    return client
        .dynamicResourceAllocation()
        .v1()
        .deviceClasses()
        .resource(
            new DeviceClassBuilder()
                .withNewMetadata()
                .withName(driver)
                .endMetadata()
                .withNewSpec()
                .addNewSelector()
                .withNewCel()
                .withExpression("device.driver == \"" + driver + "\"")
                .endCel()
                .endSelector()
                .withExtendedResourceName(extendedResourceName)
                .endSpec()
                .build())
        .create();
  }

  /**
   * Allocates a claim: stores it first if it is not stored yet, then writes the allocation into its
   * status, as the scheduler does when a pod that uses it is scheduled.
   *
   * @param claim the claim, stored or not, with its device requests
   * @return the claim as stored, allocated
   * @throws DraAllocationException when it cannot be allocated, saying why
   */
  public ResourceClaim allocate(ResourceClaim claim) {
    Objects.requireNonNull(claim, "claim");
    String namespace = claim.getMetadata().getNamespace();
    String name = claim.getMetadata().getName();
    var claims = claims(namespace);
    ResourceClaim stored = claims.withName(name).get();
    if (stored == null) {
      stored = claims.resource(claim).create();
    }
    return allocateStored(stored);
  }

  /**
   * Allocates a claim already stored in the API server.
   *
   * @param namespace the claim's namespace
   * @param name the claim's name
   * @return the claim, allocated
   * @throws DraAllocationException when it cannot be allocated, or does not exist
   */
  public ResourceClaim allocate(String namespace, String name) {
    ResourceClaim stored = claims(namespace).withName(name).get();
    if (stored == null) {
      throw new DraAllocationException(namespace + "/" + name, "no such ResourceClaim");
    }
    return allocateStored(stored);
  }

  private ResourceClaim allocateStored(ResourceClaim stored) {
    if (stored.getStatus() != null && stored.getStatus().getAllocation() != null) {
      return stored; // already allocated: the scheduler keeps it
    }
    AllocationResult allocation = allocator(stored).allocate(stored, labels(namespaceOf(stored)));
    return writeAllocation(stored, allocation, null);
  }

  private Allocator allocator(ResourceClaim except) {
    var dra = client.dynamicResourceAllocation().v1();
    List<ResourceClaim> others =
        dra.resourceClaims().inAnyNamespace().list().getItems().stream()
            .filter(c -> !Objects.equals(uid(c), uid(except)))
            .toList();
    return new Allocator(
        nodeName,
        dra.resourcesSlices().list().getItems(),
        dra.deviceClasses().list().getItems(),
        others,
        shareIds);
  }

  private ResourceClaim writeAllocation(
      ResourceClaim stored, AllocationResult allocation, Pod reservedFor) {
    ResourceClaimBuilder b = new ResourceClaimBuilder(stored);
    if (allocation != null) {
      b.editOrNewStatus().withAllocation(allocation).endStatus();
    }
    if (reservedFor != null) {
      List<ResourceClaimConsumerReference> refs =
          new ArrayList<>(
              stored.getStatus() == null || stored.getStatus().getReservedFor() == null
                  ? List.of()
                  : stored.getStatus().getReservedFor());
      if (refs.stream().noneMatch(r -> uid(reservedFor).equals(r.getUid()))) {
        ResourceClaimConsumerReference ref = new ResourceClaimConsumerReference();
        ref.setResource("pods");
        ref.setName(reservedFor.getMetadata().getName());
        ref.setUid(uid(reservedFor));
        refs.add(ref);
      }
      b.editOrNewStatus().withReservedFor(refs).endStatus();
    }
    return claims(namespaceOf(stored)).resource(b.build()).updateStatus();
  }

  /**
   * Stores a claim and writes an allocation the test chose, without checking it against any slice:
   * for tests that pin a device (a scheduler picks by attributes, never by name) or that give a
   * driver an allocation a scheduler would never make. The claim's spec gets one request per
   * request name in the results, of the class named like the results' first driver.
   *
   * @param namespace the claim's namespace
   * @param claimName the claim's name
   * @param results the allocation's results (see {@link #device}); none leaves the claim
   *     unallocated
   * @return the claim as stored
   */
  public ResourceClaim assign(
      String namespace, String claimName, DeviceRequestAllocationResult... results) {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(claimName, "claimName");
    String className = results.length == 0 ? "" : results[0].getDriver();
    List<DeviceRequest> requests = new ArrayList<>();
    for (String request :
        Arrays.stream(results)
            .map(r -> r.getRequest().split("/", 2)[0])
            .collect(java.util.stream.Collectors.toCollection(LinkedHashSet::new))) {
      requests.add(
          new DeviceRequestBuilder()
              .withName(request)
              .withNewExactly()
              .withDeviceClassName(className)
              .endExactly()
              .build());
    }
    ResourceClaim created =
        claims(namespace)
            .resource(
                new ResourceClaimBuilder()
                    .withNewMetadata()
                    .withName(claimName)
                    .withNamespace(namespace)
                    .endMetadata()
                    .withNewSpec()
                    .withNewDevices()
                    .withRequests(requests)
                    .endDevices()
                    .endSpec()
                    .build())
            .create();
    if (results.length == 0) {
      return created;
    }
    AllocationResult allocation =
        new io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder()
            .withNewDevices()
            .withResults(results)
            .endDevices()
            .build();
    return writeAllocation(created, allocation, null);
  }

  /**
   * One result of an allocation, for {@link #assign}.
   *
   * @param request the request's name in the claim
   * @param driver the driver that published the device
   * @param pool the device's pool (for node-local devices: the node name)
   * @param device the device's name in its slice
   * @return the result
   */
  public static DeviceRequestAllocationResult device(
      String request, String driver, String pool, String device) {
    return new DeviceRequestAllocationResultBuilder()
        .withRequest(request)
        .withDriver(driver)
        .withPool(pool)
        .withDevice(device)
        .build();
  }

  /**
   * Schedules a stored pod onto the node as the 1.34+ scheduler does for DRA: creates the claims of
   * its claim templates (named {@code <pod>-<claim>-<random>}, listed in {@code
   * status.resourceClaimStatuses}), allocates every claim it uses that is not allocated yet and
   * reserves them for the pod, creates and allocates the special claim for its extended resources
   * served by a DeviceClass (below), and binds the pod to the node.
   *
   * <p>Extended resources ({@code pkg/scheduler/framework/plugins/dynamicresources/}{@code
   * extendeddynamicresources.go}): a container's request for {@code vendor.com/x: n} is served by
   * DRA when a DeviceClass has {@code extendedResourceName: vendor.com/x} (or is named {@code x}
   * for {@code deviceclass.resource.kubernetes.io/x}) and the node's {@code Node} does not list it
   * as allocatable (then the device plugin serves it). One claim per pod, named {@code
   * <pod>-extended-resources-<random>}, annotated {@value #EXTENDED_RESOURCE_CLAIM_ANNOTATION},
   * owned by the pod, with one request {@code container-<i>-request-<j>} (i: the container's index
   * in init containers then containers; j: the resource's index in the container's sorted requests)
   * of {@code count: n} per container and resource; {@code pod.status.extendedResourceClaimStatus}
   * maps each request back to its container and resource.
   *
   * @param namespace the pod's namespace
   * @param podName the pod's name
   * @return the pod as stored after scheduling
   * @throws DraAllocationException when a claim cannot be allocated, saying which and why
   */
  public Pod schedule(String namespace, String podName) {
    var pods = client.pods().inNamespace(namespace);
    Pod pod = pods.withName(podName).get();
    if (pod == null) {
      throw new DraAllocationException("", "no pod " + namespace + "/" + podName);
    }
    List<PodResourceClaimStatus> generated = new ArrayList<>();
    var claims = claims(namespace);
    for (PodResourceClaim pc : orEmpty(pod.getSpec().getResourceClaims())) {
      String claimName = pc.getResourceClaimName();
      if (claimName == null && pc.getResourceClaimTemplateName() != null) {
        claimName = fromTemplate(pod, pc).getMetadata().getName();
        PodResourceClaimStatus s = new PodResourceClaimStatus();
        s.setName(pc.getName());
        s.setResourceClaimName(claimName);
        generated.add(s);
      }
      if (claimName == null) {
        continue;
      }
      ResourceClaim stored = claims.withName(claimName).get();
      if (stored == null) {
        throw new DraAllocationException(
            namespace + "/" + claimName, "pod " + podName + " uses it, but it does not exist");
      }
      ResourceClaim allocated = allocateStored(stored);
      writeAllocation(allocated, null, pod);
    }
    PodExtendedResourceClaimStatus extended = extendedResources(pod);
    Pod bound =
        pods.resource(new PodBuilder(pod).editSpec().withNodeName(nodeName).endSpec().build())
            .update();
    PodBuilder status = new PodBuilder(bound);
    if (!generated.isEmpty()) {
      status.editOrNewStatus().withResourceClaimStatuses(generated).endStatus();
    }
    if (extended != null) {
      status.editOrNewStatus().withExtendedResourceClaimStatus(extended).endStatus();
    }
    return pods.resource(status.build()).updateStatus();
  }

  private ResourceClaim fromTemplate(Pod pod, PodResourceClaim pc) {
    String namespace = pod.getMetadata().getNamespace();
    ResourceClaimTemplate template =
        client
            .dynamicResourceAllocation()
            .v1()
            .resourceClaimTemplates()
            .inNamespace(namespace)
            .withName(pc.getResourceClaimTemplateName())
            .get();
    if (template == null) {
      throw new DraAllocationException(
          "",
          "ResourceClaimTemplate "
              + namespace
              + "/"
              + pc.getResourceClaimTemplateName()
              + " not found");
    }
    return claims(namespace)
        .resource(
            new ResourceClaimBuilder()
                .withNewMetadata()
                .withName(pod.getMetadata().getName() + "-" + pc.getName() + "-" + suffix())
                .withNamespace(namespace)
                .withAnnotations(Map.of("resource.kubernetes.io/pod-claim-name", pc.getName()))
                .withOwnerReferences(owner(pod))
                .endMetadata()
                .withSpec(template.getSpec().getSpec())
                .build())
        .create();
  }

  /** The special claim for the pod's extended resources served by DRA; null when none are. */
  private PodExtendedResourceClaimStatus extendedResources(Pod pod) {
    Map<String, String> classByResource = new TreeMap<>();
    for (DeviceClass c :
        client.dynamicResourceAllocation().v1().deviceClasses().list().getItems()) {
      classByResource.put(
          IMPLICIT_EXTENDED_RESOURCE_PREFIX + c.getMetadata().getName(), c.getMetadata().getName());
      if (c.getSpec() != null && c.getSpec().getExtendedResourceName() != null) {
        classByResource.put(c.getSpec().getExtendedResourceName(), c.getMetadata().getName());
      }
    }
    Node node = client.nodes().withName(nodeName).get();
    Map<String, Quantity> allocatable =
        node == null || node.getStatus() == null || node.getStatus().getAllocatable() == null
            ? Map.of()
            : node.getStatus().getAllocatable();
    List<Container> containers = new ArrayList<>(orEmpty(pod.getSpec().getInitContainers()));
    containers.addAll(orEmpty(pod.getSpec().getContainers()));
    List<DeviceRequest> requests = new ArrayList<>();
    List<ContainerExtendedResourceRequest> mappings = new ArrayList<>();
    for (int i = 0; i < containers.size(); i++) {
      Container c = containers.get(i);
      Map<String, Quantity> asked =
          c.getResources() == null || c.getResources().getRequests() == null
              ? Map.of()
              : new TreeMap<>(c.getResources().getRequests());
      List<String> sorted = new ArrayList<>(asked.keySet());
      for (String resource : sorted) {
        String className = classByResource.get(resource);
        long count = Allocator.amount(asked.get(resource)).longValue();
        if (className == null || count == 0) {
          continue;
        }
        if (Allocator.amount(allocatable.get(resource)).compareTo(BigDecimal.ZERO) > 0) {
          continue; // the node serves it through a device plugin
        }
        String requestName = "container-" + i + "-request-" + sorted.indexOf(resource);
        requests.add(
            new DeviceRequestBuilder()
                .withName(requestName)
                .withNewExactly()
                .withDeviceClassName(className)
                .withAllocationMode("ExactCount")
                .withCount(count)
                .endExactly()
                .build());
        ContainerExtendedResourceRequest m = new ContainerExtendedResourceRequest();
        m.setContainerName(c.getName());
        m.setResourceName(resource);
        m.setRequestName(requestName);
        mappings.add(m);
      }
    }
    if (requests.isEmpty()) {
      return null;
    }
    requests.sort(java.util.Comparator.comparing(DeviceRequest::getName));
    ResourceClaim claim =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withName(pod.getMetadata().getName() + "-extended-resources-" + suffix())
            .withNamespace(pod.getMetadata().getNamespace())
            .withAnnotations(Map.of(EXTENDED_RESOURCE_CLAIM_ANNOTATION, "true"))
            .withOwnerReferences(owner(pod))
            .endMetadata()
            .withNewSpec()
            .withNewDevices()
            .withRequests(requests)
            .endDevices()
            .endSpec()
            .build();
    // Upstream allocates in memory first and creates the claim only when it fits.
    AllocationResult allocation = allocator(claim).allocate(claim, labels(namespaceOf(claim)));
    ResourceClaim created = claims(namespaceOf(claim)).resource(claim).create();
    writeAllocation(writeAllocation(created, allocation, null), null, pod);
    PodExtendedResourceClaimStatus status = new PodExtendedResourceClaimStatus();
    status.setResourceClaimName(created.getMetadata().getName());
    status.setRequestMappings(mappings);
    return status;
  }

  private static io.fabric8.kubernetes.api.model.OwnerReference owner(Pod pod) {
    return new OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind("Pod")
        .withName(pod.getMetadata().getName())
        .withUid(pod.getMetadata().getUid())
        .withController(true)
        .withBlockOwnerDeletion(true)
        .build();
  }

  private NonNamespaceOperation<ResourceClaim, ResourceClaimList, Resource<ResourceClaim>> claims(
      String namespace) {
    return client.dynamicResourceAllocation().v1().resourceClaims().inNamespace(namespace);
  }

  private Map<String, String> labels(String namespace) {
    Namespace ns = client.namespaces().withName(namespace).get();
    return ns == null || ns.getMetadata().getLabels() == null
        ? Map.of()
        : ns.getMetadata().getLabels();
  }

  /** Like the API server's generateName: five characters from a consonant-and-digit alphabet. */
  private static String suffix() {
    String alphabet = "bcdfghjklmnpqrstvwxz2456789";
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < 5; i++) {
      s.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
    }
    return s.toString();
  }

  private static String namespaceOf(ResourceClaim c) {
    return c.getMetadata().getNamespace();
  }

  private static String uid(ResourceClaim c) {
    return c.getMetadata().getUid();
  }

  private static String uid(Pod p) {
    return p.getMetadata().getUid();
  }

  private static <T> List<T> orEmpty(List<T> l) {
    return l == null ? List.of() : l;
  }
}
