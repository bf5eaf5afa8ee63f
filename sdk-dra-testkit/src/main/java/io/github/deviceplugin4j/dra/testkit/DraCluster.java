package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.github.deviceplugin4j.testkit.DraKubelet;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * One test's simulated node for a DRA driver, as {@link DraTest @DraTest} sets it up: the fake
 * kubelet, the mock API server and its client, the node name, and short directories for the
 * driver's sockets. Valid until the end of the test.
 *
 * <p>It plays the scheduler too: {@link #allocate(ResourceClaim)} allocates a claim from the
 * published slices like the 1.37 scheduler ({@link DraScheduler} says what is modelled), {@link
 * #assign} writes an allocation the test chose by hand, and {@link #scheduler()} has the rest
 * (pods, extended resources).
 */
public final class DraCluster {
  private final FakeKubelet kubelet;
  private final KubernetesMockServer apiServer;
  private final KubernetesClient client;
  private final String nodeName;
  private final Path root;
  private final DraScheduler scheduler;
  private final PodPreparer pods;

  DraCluster(
      FakeKubelet kubelet,
      KubernetesMockServer apiServer,
      KubernetesClient client,
      String nodeName,
      Path root) {
    this.kubelet = kubelet;
    this.apiServer = apiServer;
    this.client = client;
    this.nodeName = nodeName;
    this.root = root;
    this.scheduler = DraScheduler.forNode(client, nodeName);
    this.pods = new PodPreparer(client, kubelet);
  }

  /**
   * The fake kubelet; it watches {@link #registryDir()}.
   *
   * @return the kubelet
   */
  public FakeKubelet kubelet() {
    return kubelet;
  }

  /**
   * fabric8's mock API server in CRUD mode (to script one-off answers with {@code expect()}).
   *
   * @return the server
   */
  public KubernetesMockServer apiServer() {
    return apiServer;
  }

  /**
   * A client of the mock API server, for the driver and for the test (DeviceClasses, claims, pods).
   *
   * @return the client
   */
  public KubernetesClient client() {
    return client;
  }

  /**
   * The node's name; its {@code Node} object exists in the API server.
   *
   * @return the node name
   */
  public String nodeName() {
    return nodeName;
  }

  /**
   * The plugins registry the fake kubelet watches: the driver's registration socket goes here.
   *
   * @return the registry directory
   */
  public Path registryDir() {
    return kubelet.registryDir().orElseThrow();
  }

  /**
   * A short directory for a driver's DRA socket and data (like {@code
   * /var/lib/kubelet/plugins/<driver>}); created by the driver, deleted after the test.
   *
   * @param driver the driver name
   * @return the directory
   */
  public Path pluginDir(String driver) {
    Objects.requireNonNull(driver, "driver");
    return root.resolve("plugins").resolve(driver);
  }

  /**
   * The fake kubelet's PodResources socket (like {@code
   * /var/lib/kubelet/pod-resources/kubelet.sock}): after {@link #preparePod} it lists each
   * container's claims and their devices as dynamic resources.
   *
   * @return the socket path
   */
  public Path podResourcesSocket() {
    return kubelet.podResourcesSocket().orElseThrow();
  }

  /**
   * A directory for the driver's CDI specs (like {@code /var/run/cdi}), deleted after the test.
   *
   * @return the directory
   */
  public Path cdiDir() {
    return root.resolve("cdi");
  }

  /**
   * The scheduler for this node: claims, pods, extended resources.
   *
   * @return the scheduler
   */
  public DraScheduler scheduler() {
    return scheduler;
  }

  /**
   * Allocates a claim from the slices and DeviceClasses in the API server, as the scheduler would:
   * stores the claim if it is not stored yet, then writes {@code status.allocation}.
   *
   * @param claim the claim with its device requests
   * @return the claim as stored, allocated
   * @throws DraAllocationException when it cannot be allocated, saying why
   */
  public ResourceClaim allocate(ResourceClaim claim) {
    return scheduler.allocate(claim);
  }

  /**
   * Stores a claim allocated to one device of this node's pool that the test chose by hand (no
   * slice or class is checked): for a test that must know which device the driver prepares.
   *
   * @param namespace the claim's namespace
   * @param claimName the claim's name
   * @param request the request's name
   * @param driver the driver that published the device
   * @param device the device's name in the node's pool
   * @return the claim as stored, allocated
   */
  public ResourceClaim assign(
      String namespace, String claimName, String request, String driver, String device) {
    return scheduler.assign(
        namespace, claimName, DraScheduler.device(request, driver, nodeName, device));
  }

  /**
   * Prepares a scheduled pod's claims on the fake kubelet as a 1.34+ kubelet does before it starts
   * the pod ({@code prepareResources} in {@code pkg/kubelet/cm/dra/manager.go}): its claims from
   * {@code spec.resourceClaims} and the claim the scheduler made for its extended resources ({@code
   * status.extendedResourceClaimStatus}), each read from the API server and required to be
   * allocated and reserved for the pod ({@link DraScheduler#schedule} does both), one prepare call
   * per driver. On success the pod runs: the PodResources API lists each container's claims and
   * their devices as dynamic resources.
   *
   * @param namespace the pod's namespace
   * @param podName the pod's name
   * @return each driver's outcome, in call order; the calls stop at the first that failed
   * @throws IllegalStateException when the kubelet would refuse the pod before calling a driver (a
   *     claim missing, not reserved for the pod, not allocated), with the kubelet's words
   */
  public Map<String, DraResult> preparePod(String namespace, String podName) {
    return pods.prepare(namespace, podName);
  }

  /**
   * Unprepares a pod's claims on the fake kubelet after the pod stopped, one call per driver that
   * prepared any of them ({@link DraKubelet#unprepareResources}).
   *
   * @param namespace the pod's namespace
   * @param podName the pod's name
   * @return each driver's outcome
   */
  public Map<String, DraResult> unpreparePod(String namespace, String podName) {
    return pods.unprepare(namespace, podName);
  }

  /**
   * Waits until the devices a driver publishes for this node (its ResourceSlices in the API server)
   * satisfy a condition: a driver publishes after it starts, and again after the kubelet wiped its
   * slices, so a test allocates only once they are there. The API server is polled every 20 ms.
   *
   * @param driver the driver name
   * @param condition what the devices must satisfy, e.g. {@code list -> list.size() == 2}
   * @param timeout how long to wait
   * @return the devices that satisfied it, in slice order
   * @throws IllegalStateException when the timeout passes first, with the last devices seen
   */
  public List<Device> awaitDevices(
      String driver, Predicate<List<Device>> condition, Duration timeout) {
    Objects.requireNonNull(driver, "driver");
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<Device> devices =
          client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems().stream()
              .filter(
                  s ->
                      driver.equals(s.getSpec().getDriver())
                          && nodeName.equals(s.getSpec().getNodeName()))
              .sorted(java.util.Comparator.comparing(s -> s.getMetadata().getName()))
              .flatMap(
                  s ->
                      s.getSpec().getDevices() == null
                          ? java.util.stream.Stream.<Device>empty()
                          : s.getSpec().getDevices().stream())
              .toList();
      if (condition.test(devices)) {
        return devices;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "timed out after "
                + timeout
                + " waiting for the devices of "
                + driver
                + " on "
                + nodeName
                + "; last seen: "
                + devices.stream().map(Device::getName).toList(),
            new TimeoutException());
      }
      try {
        TimeUnit.MILLISECONDS.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for the devices of " + driver, e);
      }
    }
  }
}
