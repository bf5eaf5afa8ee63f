package io.github.deviceplugin4j.dra.slices;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks a ResourceClaim before the driver prepares it: the claim read from the API server must be
 * the one the kubelet means (same UID) and be allocated to this driver on this node's pool.
 *
 * <p>The kubelet sends only the claim's namespace, name and UID; the devices to prepare are in the
 * claim's {@code status.allocation}. A check that fails gives an error text for that claim's entry
 * in the NodePrepareResources response, and the kubelet retries later.
 *
 * <pre>{@code
 * ClaimCheck check = new ClaimCheck(client, "fpga.example.com", nodeName);
 * ClaimCheck.Result result = check.check(claim.namespace(), claim.name(), claim.uid());
 * if (!result.isAllocated()) {
 *   return perClaimError(result.error());
 * }
 * for (ClaimCheck.AllocatedDevice d : result.devices()) { ... d.device() ... }
 * }</pre>
 */
public final class ClaimCheck {
  private final KubernetesClient client;
  private final String driverName;
  private final String poolName;

  /**
   * A check for one driver's pool.
   *
   * @param client the Kubernetes client; needs {@code get} on {@code resourceclaims}
   * @param driverName this driver's name
   * @param poolName this node's pool: the node name
   */
  public ClaimCheck(KubernetesClient client, String driverName, String poolName) {
    this.client = Objects.requireNonNull(client, "client");
    this.driverName = Objects.requireNonNull(driverName, "driverName");
    this.poolName = Objects.requireNonNull(poolName, "poolName");
  }

  /**
   * Reads the claim and checks it.
   *
   * @param namespace the claim's namespace
   * @param name the claim's name
   * @param uid the claim's UID as the kubelet sent it
   * @return the devices allocated to this driver on this pool, or the reason they cannot be
   *     prepared; never throws for an API error, which becomes the reason
   */
  public Result check(String namespace, String name, String uid) {
    String ref = namespace + "/" + name;
    ResourceClaim claim;
    try {
      claim =
          client
              .dynamicResourceAllocation()
              .v1()
              .resourceClaims()
              .inNamespace(namespace)
              .withName(name)
              .get();
    } catch (KubernetesClientException e) {
      String hint =
          e.getCode() == 403
              ? ": the driver's service account needs get on resourceclaims (see rbac.yaml)"
              : "";
      return Result.rejected(
          "cannot read claim " + ref + " from the API server (" + describe(e) + ")" + hint);
    }
    if (claim == null) {
      return Result.rejected("claim " + ref + " does not exist: it was deleted before prepare");
    }
    String actualUid = claim.getMetadata().getUid();
    if (!Objects.equals(actualUid, uid)) {
      return Result.rejected(
          "claim "
              + ref
              + " has uid "
              + actualUid
              + ", the kubelet asked for "
              + uid
              + ": uid differs: the claim was re-created");
    }
    if (claim.getStatus() == null
        || claim.getStatus().getAllocation() == null
        || claim.getStatus().getAllocation().getDevices() == null) {
      return Result.rejected("claim " + ref + " is not allocated");
    }
    List<DeviceRequestAllocationResult> results =
        claim.getStatus().getAllocation().getDevices().getResults();
    if (results == null) {
      results = List.of();
    }
    TreeSet<String> drivers = new TreeSet<>();
    TreeSet<String> ourPools = new TreeSet<>();
    List<AllocatedDevice> ours = new ArrayList<>();
    for (DeviceRequestAllocationResult r : results) {
      drivers.add(String.valueOf(r.getDriver()));
      if (!driverName.equals(r.getDriver())) {
        continue;
      }
      ourPools.add(String.valueOf(r.getPool()));
      if (poolName.equals(r.getPool())) {
        Map<String, String> consumed = new TreeMap<>();
        if (r.getConsumedCapacity() != null) {
          r.getConsumedCapacity().forEach((k, v) -> consumed.put(k, v.toString()));
        }
        ours.add(
            new AllocatedDevice(
                r.getRequest(),
                r.getPool(),
                r.getDevice(),
                Boolean.TRUE.equals(r.getAdminAccess()),
                r.getShareID(),
                consumed,
                r.getBindingConditions() == null ? List.of() : r.getBindingConditions()));
      }
    }
    if (ours.isEmpty()) {
      if (ourPools.isEmpty()) {
        return Result.rejected(
            "claim "
                + ref
                + (drivers.isEmpty()
                    ? " is allocated with no devices"
                    : " is allocated to driver " + String.join(", ", drivers))
                + ", not to "
                + driverName);
      }
      return Result.rejected(
          "claim "
              + ref
              + " is allocated on pool "
              + String.join(", ", ourPools)
              + ", this node is "
              + poolName);
    }
    return Result.allocated(claim, ours);
  }

  private static String describe(KubernetesClientException e) {
    if (e.getCode() > 0) {
      String message = e.getStatus() != null ? e.getStatus().getMessage() : null;
      return "HTTP " + e.getCode() + (message == null ? "" : ": " + message);
    }
    return e.getMessage();
  }

  /**
   * One device allocated to this driver on this node, as in the claim's allocation results.
   *
   * @param request the request name in the claim ({@code <request>} or {@code
   *     <request>/<subrequest>})
   * @param pool the pool: this node
   * @param device the DRA device name (see {@code BackendDevices.deviceName})
   * @param adminAccess whether the device was allocated for admin access (shared, monitoring)
   * @param shareId the share's ID when the device allows multiple allocations (consumable
   *     capacity), else null
   * @param consumedCapacity by capacity name, the amount this allocation takes of a shared device
   *     (quantities such as {@code 10Gi}); empty otherwise
   * @param bindingConditions the binding conditions the scheduler waits for; usually empty
   */
  public record AllocatedDevice(
      String request,
      String pool,
      String device,
      boolean adminAccess,
      String shareId,
      Map<String, String> consumedCapacity,
      List<String> bindingConditions) {

    /**
     * Copies the maps and lists.
     *
     * @param request see {@link #request()}
     * @param pool see {@link #pool()}
     * @param device see {@link #device()}
     * @param adminAccess see {@link #adminAccess()}
     * @param shareId see {@link #shareId()}
     * @param consumedCapacity see {@link #consumedCapacity()}
     * @param bindingConditions see {@link #bindingConditions()}
     */
    public AllocatedDevice {
      consumedCapacity = Map.copyOf(consumedCapacity);
      bindingConditions = List.copyOf(bindingConditions);
    }

    /**
     * A device allocated whole, as before consumable capacity.
     *
     * @param request see {@link #request()}
     * @param pool see {@link #pool()}
     * @param device see {@link #device()}
     * @param adminAccess see {@link #adminAccess()}
     */
    public AllocatedDevice(String request, String pool, String device, boolean adminAccess) {
      this(request, pool, device, adminAccess, null, Map.of(), List.of());
    }
  }

  /**
   * The outcome of a check: the devices to prepare, or why the claim cannot be prepared here.
   *
   * @param claim the claim as read, when it could be read and is allocated here; else null
   * @param devices the devices allocated to this driver on this pool; empty when rejected
   * @param error why the claim cannot be prepared here; null when allocated
   */
  public record Result(ResourceClaim claim, List<AllocatedDevice> devices, String error) {

    /**
     * Makes an unmodifiable copy of the devices.
     *
     * @param claim see {@link #claim()}
     * @param devices see {@link #devices()}
     * @param error see {@link #error()}
     */
    public Result {
      devices = List.copyOf(devices);
    }

    static Result allocated(ResourceClaim claim, List<AllocatedDevice> devices) {
      return new Result(claim, devices, null);
    }

    static Result rejected(String error) {
      return new Result(null, List.of(), error);
    }

    /**
     * Whether the claim is allocated to this driver on this node.
     *
     * @return true when {@link #devices()} holds what to prepare
     */
    public boolean isAllocated() {
      return error == null;
    }
  }
}
