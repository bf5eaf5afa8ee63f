package io.github.deviceplugin4j.core;

/**
 * Advertises each physical device of a resource several times, so that several containers can use
 * one device at once: what NVIDIA's time-slicing calls {@code replicas}, squat's
 * generic-device-plugin {@code count} and Intel's plugins {@code -shared-dev-num}. Given on the
 * builder, per resource:
 *
 * <pre>{@code
 * DevicePluginHost.builder()
 *     .backend(new SerialBackend(), Sharing.replicas(4).renamed())
 *     .run();
 * }</pre>
 *
 * <p>What the core does with it:
 *
 * <ul>
 *   <li>each device the backend lists becomes {@link #replicas()} devices for the kubelet, with the
 *       stable IDs {@code <device ID>::<k>}, {@code k} from 0 (a device {@code ttyUSB0} shared 2x
 *       is {@code ttyUSB0::0} and {@code ttyUSB0::1}); a replica has its device's health, NUMA
 *       nodes and allocation, so a device's health applies to every replica;
 *   <li>Allocate and PreStartContainer map replicas back to their devices: an {@link Allocator} or
 *       {@link PreStartHook} sees each physical device once, and a container given two replicas of
 *       one device gets its device nodes, mounts and variables once;
 *   <li>the kubelet is told it may ask for a preferred allocation, answered by {@link
 *       AllocationPolicies#replicasSpread()} (replicas of different devices first) or, with {@link
 *       #packed()}, {@link AllocationPolicies#replicasPacked()}; a backend's own {@link
 *       PreferredAllocator} wins and sees the replicas;
 *   <li>{@link #renamed()} advertises the resource as {@code <name>.shared}, {@link
 *       #oneReplicaPerContainer()} refuses a container that asks for more than one replica.
 * </ul>
 *
 * <p>Sharing isolates nothing: containers that share a device see the same device node, with no
 * limit on memory, time or bandwidth between them and no protection of one from another; a
 * container that asks for two replicas gets no more of the device than one that asks for one.
 * PodResources shows the replica IDs the kubelet allocated.
 *
 * <p>{@code replicas(1)} (and {@link #none()}) advertises each device once under its own ID.
 */
@Experimental("new in 0.x; the replica ID format and options may change after use on real nodes")
public final class Sharing {

  /** The most replicas of one device. */
  public static final int MAX_REPLICAS = 1000;

  /** What separates a device ID from the replica number in a replica ID. */
  public static final String SEPARATOR = "::";

  /** The suffix {@link #renamed()} adds to the resource name. */
  public static final String RENAMED_SUFFIX = ".shared";

  private static final Sharing NONE = new Sharing(1, false, false, false);

  private final int replicas;
  private final boolean renamed;
  private final boolean onePerContainer;
  private final boolean packed;

  private Sharing(int replicas, boolean renamed, boolean onePerContainer, boolean packed) {
    this.replicas = replicas;
    this.renamed = renamed;
    this.onePerContainer = onePerContainer;
    this.packed = packed;
  }

  /**
   * No sharing: every device is advertised once under its own ID.
   *
   * @return the default
   */
  public static Sharing none() {
    return NONE;
  }

  /**
   * Each device advertised {@code count} times, under its resource's own name, replicas spread over
   * the devices by the preferred allocation.
   *
   * @param count replicas per device, 1 to {@value #MAX_REPLICAS}
   * @return the sharing
   * @throws IllegalArgumentException when {@code count} is out of range
   */
  public static Sharing replicas(int count) {
    if (count < 1 || count > MAX_REPLICAS) {
      throw new IllegalArgumentException(
          "replicas must be between 1 and " + MAX_REPLICAS + ", was " + count);
    }
    return new Sharing(count, false, false, false);
  }

  /**
   * The same sharing, advertising the resource as {@code <name>.shared} (NVIDIA's {@code
   * renameByDefault}), so that pods ask for the shared resource by name.
   *
   * @return a new value
   */
  public Sharing renamed() {
    return new Sharing(replicas, true, onePerContainer, packed);
  }

  /**
   * The same sharing, refusing an Allocate that gives a container more than one replica (NVIDIA's
   * {@code failRequestsGreaterThanOne}): two replicas would give it no more of the device, and a
   * pod asking for two usually means the user expected two devices.
   *
   * @return a new value
   */
  public Sharing oneReplicaPerContainer() {
    return new Sharing(replicas, renamed, true, packed);
  }

  /**
   * The same sharing, its preferred allocation filling one device's replicas before the next
   * device's ({@link AllocationPolicies#replicasPacked()}) instead of spreading them.
   *
   * @return a new value
   */
  public Sharing packed() {
    return new Sharing(replicas, renamed, onePerContainer, true);
  }

  /**
   * Replicas per device.
   *
   * @return 1 when not shared
   */
  public int replicas() {
    return replicas;
  }

  /**
   * Whether devices are advertised more than once.
   *
   * @return true when {@link #replicas()} is over 1
   */
  public boolean isShared() {
    return replicas > 1;
  }

  /**
   * Whether the resource is advertised as {@code <name>.shared}.
   *
   * @return see {@link #renamed()}
   */
  public boolean isRenamed() {
    return renamed;
  }

  /**
   * Whether a container may get at most one replica.
   *
   * @return see {@link #oneReplicaPerContainer()}
   */
  public boolean isOneReplicaPerContainer() {
    return onePerContainer;
  }

  /**
   * Whether the preferred allocation packs replicas rather than spreading them.
   *
   * @return see {@link #packed()}
   */
  public boolean isPacked() {
    return packed;
  }

  /**
   * The resource name the kubelet sees.
   *
   * @param name the backend's resource name
   * @return {@code name}, or {@code name + ".shared"} when {@link #isRenamed()}
   */
  public String resourceName(String name) {
    return renamed ? name + RENAMED_SUFFIX : name;
  }

  /**
   * The ID of one replica.
   *
   * @param deviceId the physical device's ID
   * @param k the replica, from 0
   * @return {@code deviceId + "::" + k}
   */
  public static String replicaId(String deviceId, int k) {
    return deviceId + SEPARATOR + k;
  }

  /**
   * The physical device's ID of a replica ID: everything before the last {@code "::"}.
   *
   * @param replicaId a replica ID
   * @return the device ID; {@code replicaId} itself when it has no replica number
   */
  public static String deviceId(String replicaId) {
    int at = replicaId.lastIndexOf(SEPARATOR);
    if (at <= 0) {
      return replicaId;
    }
    for (int i = at + SEPARATOR.length(); i < replicaId.length(); i++) {
      if (!Character.isDigit(replicaId.charAt(i))) {
        return replicaId;
      }
    }
    return at + SEPARATOR.length() == replicaId.length() ? replicaId : replicaId.substring(0, at);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Sharing s
        && s.replicas == replicas
        && s.renamed == renamed
        && s.onePerContainer == onePerContainer
        && s.packed == packed;
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(replicas, renamed, onePerContainer, packed);
  }

  @Override
  public String toString() {
    return "Sharing[replicas="
        + replicas
        + (renamed ? ", renamed" : "")
        + (onePerContainer ? ", oneReplicaPerContainer" : "")
        + (packed ? ", packed" : "")
        + "]";
  }
}
