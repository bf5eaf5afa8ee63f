package io.github.deviceplugin4j.testkit;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * What a pod's container asks of one resource, for {@link FakeKubelet#allocate(PodRequest)}.
 *
 * <p>Either {@code count} devices chosen by the kubelet (the normal flow: the kubelet picks from
 * healthy, unallocated devices, asking {@code GetPreferredAllocation} first when the plugin offers
 * it), or explicit {@code deviceIds}, sent to the plugin's {@code Allocate} exactly as given, even
 * unknown or unhealthy ones, so a plugin's own validation can be tested.
 *
 * <pre>{@code
 * kubelet.allocate(PodRequest.count("example.com/fpga", 2).withPod("ml", "trainer-0", uid));
 * }</pre>
 *
 * @param namespace the pod's namespace
 * @param podName the pod's name
 * @param podUid the pod's UID (the key for {@link FakeKubelet#release(String)})
 * @param containerName the container
 * @param resourceName the resource
 * @param count how many devices; with explicit IDs the number of IDs
 * @param deviceIds explicit device IDs, or empty to let the kubelet choose
 * @param mustInclude device IDs the kubelet passes as {@code must_include_deviceIDs} to {@code
 *     GetPreferredAllocation} (on a node: devices reused from init containers); they are part of
 *     the allocation
 */
public record PodRequest(
    String namespace,
    String podName,
    String podUid,
    String containerName,
    String resourceName,
    int count,
    List<String> deviceIds,
    List<String> mustInclude) {

  /**
   * Checks the components and copies the collections.
   *
   * @param namespace see {@link #namespace()}
   * @param podName see {@link #podName()}
   * @param podUid see {@link #podUid()}
   * @param containerName see {@link #containerName()}
   * @param resourceName see {@link #resourceName()}
   * @param count see {@link #count()}
   * @param deviceIds see {@link #deviceIds()}
   * @param mustInclude see {@link #mustInclude()}
   */
  public PodRequest {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(podName, "podName");
    Objects.requireNonNull(podUid, "podUid");
    Objects.requireNonNull(containerName, "containerName");
    Objects.requireNonNull(resourceName, "resourceName");
    deviceIds = List.copyOf(deviceIds);
    mustInclude = List.copyOf(mustInclude);
    if (!deviceIds.isEmpty() && count != deviceIds.size()) {
      throw new IllegalArgumentException(
          "count (" + count + ") must equal the number of deviceIds (" + deviceIds.size() + ")");
    }
    if (count <= 0) {
      throw new IllegalArgumentException("count must be positive, got " + count);
    }
    if (mustInclude.size() > count) {
      throw new IllegalArgumentException(
          "mustInclude has " + mustInclude.size() + " IDs but only " + count + " are requested");
    }
  }

  /**
   * A request for {@code count} devices chosen by the kubelet, in a fresh pod (namespace {@code
   * default}, a random UID, container {@code main}).
   *
   * @param resourceName the resource
   * @param count how many devices
   * @return the request
   */
  public static PodRequest count(String resourceName, int count) {
    String uid = UUID.randomUUID().toString();
    return new PodRequest(
        "default",
        "pod-" + uid.substring(0, 8),
        uid,
        "main",
        resourceName,
        count,
        List.of(),
        List.of());
  }

  /**
   * A request for exactly these devices, in a fresh pod (namespace {@code default}, a random UID,
   * container {@code main}).
   *
   * @param resourceName the resource
   * @param deviceIds the device IDs, sent as given
   * @return the request
   */
  public static PodRequest devices(String resourceName, String... deviceIds) {
    String uid = UUID.randomUUID().toString();
    return new PodRequest(
        "default",
        "pod-" + uid.substring(0, 8),
        uid,
        "main",
        resourceName,
        deviceIds.length,
        List.of(deviceIds),
        List.of());
  }

  /**
   * The same request for another pod.
   *
   * @param namespace the namespace
   * @param podName the pod name
   * @param podUid the pod UID
   * @return a copy with these pod fields
   */
  public PodRequest withPod(String namespace, String podName, String podUid) {
    return new PodRequest(
        namespace, podName, podUid, containerName, resourceName, count, deviceIds, mustInclude);
  }

  /**
   * The same request for another container of the pod.
   *
   * @param containerName the container name
   * @return a copy with this container name
   */
  public PodRequest withContainer(String containerName) {
    return new PodRequest(
        namespace, podName, podUid, containerName, resourceName, count, deviceIds, mustInclude);
  }

  /**
   * The same request with must-include devices (see the record description).
   *
   * @param ids the device IDs that must be part of the allocation
   * @return a copy with these must-include IDs
   */
  public PodRequest withMustInclude(String... ids) {
    return new PodRequest(
        namespace, podName, podUid, containerName, resourceName, count, deviceIds, List.of(ids));
  }
}
