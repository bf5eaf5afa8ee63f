package io.github.deviceplugin4j.dra;

import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Optional capability of a {@code DeviceBackend} served by {@link BackendDriver}: computes a
 * claim's container edits from what the scheduler allocated, including each allocation's share of a
 * shared device (consumable capacity, KEP-5075) and admin access (KEP-5018). When the backend
 * implements it, it is called once per request of a claim instead of sdk-core's {@code Allocator}.
 *
 * <pre>{@code
 * class NicBackend implements DeviceBackend, ClaimAllocator {
 *   public ContainerAllocation allocate(Request request) {
 *     for (Share s : request.devices()) {
 *       String bandwidth = s.consumedCapacity().getOrDefault("bandwidth", "1G");
 *       // set up a queue pair of that bandwidth for s.shareId()
 *     }
 *     return ContainerAllocation.empty();
 *   }
 * }
 * }</pre>
 */
@FunctionalInterface
public interface ClaimAllocator {

  /**
   * The edits for one request of a claim.
   *
   * @param request the claim, the request and its allocated devices
   * @return the edits; never null (use {@link ContainerAllocation#empty()})
   * @throws Exception to fail the claim with the exception's message
   */
  ContainerAllocation allocate(Request request) throws Exception;

  /**
   * One request of a claim, as the scheduler allocated it on this node.
   *
   * @param claim the claim
   * @param request the request's name ({@code request} or {@code request/subrequest})
   * @param devices the request's devices on this node, in allocation order
   */
  record Request(Claim claim, String request, List<Share> devices) {
    /**
     * Copies the list.
     *
     * @param claim the claim
     * @param request the request
     * @param devices the devices
     */
    public Request {
      Objects.requireNonNull(claim, "claim");
      Objects.requireNonNull(request, "request");
      devices = List.copyOf(devices);
    }
  }

  /**
   * One allocated device, or one share of a shared device.
   *
   * @param device the backend's device
   * @param deviceName its DRA name
   * @param shareId the share's ID when the device is shared by several claims
   * @param consumedCapacity by capacity name, the amount this share takes (quantities)
   * @param adminAccess whether the claim has admin access (monitoring: the device stays with the
   *     claim that owns it)
   */
  record Share(
      Device device,
      String deviceName,
      Optional<String> shareId,
      Map<String, String> consumedCapacity,
      boolean adminAccess) {
    /**
     * Copies the map.
     *
     * @param device the device
     * @param deviceName the DRA name
     * @param shareId the share's ID
     * @param consumedCapacity the capacity taken
     * @param adminAccess whether admin access
     */
    public Share {
      Objects.requireNonNull(device, "device");
      Objects.requireNonNull(deviceName, "deviceName");
      Objects.requireNonNull(shareId, "shareId");
      consumedCapacity = Map.copyOf(consumedCapacity);
    }
  }
}
