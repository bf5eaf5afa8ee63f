package io.github.deviceplugin4j.dra;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.NetworkDeviceData;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.deviceplugin4j.cdi.CdiSpec;
import io.github.deviceplugin4j.cdi.CdiSpecDirectory;
import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.CdiNames;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.dra.slices.ClaimCheck;
import io.github.deviceplugin4j.dra.slices.ClaimStatusWriter;
import io.github.deviceplugin4j.dra.slices.ResourceSlicePublisher;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DRA driver made from a {@link DeviceBackend} a vendor already wrote for the device plugin API:
 * the backend's devices are published as this node's ResourceSlices, a claim's allocated devices
 * are prepared as one CDI spec per claim, and the devices' health is streamed to the kubelet.
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *   BackendDriver.builder("fpga.example.com", new FpgaBackend(Path.of("/")))
 *       .host()   // NODE_NAME from the environment, in-cluster Kubernetes client
 *       .run();
 * }
 * }</pre>
 *
 * <p><b>Devices.</b> The backend is driven like sdk-core drives it: {@link
 * DeviceBackend#start(DeviceSink)} once, {@link DeviceBackend#devices()} at start, every {@link
 * DeviceBackend#pollInterval()} when positive, and on {@link DeviceSink#rescan()}; snapshots pushed
 * to the sink are taken as they are. Reads run one at a time on the driver's own thread. Every
 * effective change of the list is mapped with {@link BackendDevices} and handed to a {@link
 * ResourceSlicePublisher} (one pool named after the node), and to the health stream.
 *
 * <p><b>Prepare.</b> For each claim: the ResourceClaim is read and checked ({@link ClaimCheck}:
 * same UID, allocated to this driver on this node's pool); each allocated device name is looked up
 * in the current device list (an unknown or unhealthy device fails the claim, naming it); then one
 * CDI spec is written for the claim, {@code <vendor>-<class>_claim-<uid>.json}, with one CDI device
 * per allocated device named {@code <claim uid>-<device>} and holding the device's device nodes,
 * mounts and environment. A device whose allocation has none of these gets no CDI device (CDI
 * refuses empty edits); the CDI names the device declares itself ({@link
 * ContainerAllocation#cdiDevices()}) are returned as they are. Annotations have no way into a
 * container under DRA: they are written as annotations of the claim's CDI spec, for tools that read
 * it.
 *
 * <p>A backend that implements {@link Allocator} computes the edits itself: it is called once per
 * request of the claim with that request's devices (a container can use one request of a claim
 * alone, like it used one device-plugin allocation), its answer replaces the devices' own edits and
 * becomes one CDI device {@code <claim uid>_<request>}, returned with the first device of the
 * request only, so that a container gets it once.
 *
 * <p>Optional backend capabilities, detected with {@code instanceof}: {@link DevicePartitions}
 * (shared counters of partitionable devices), {@link ClaimAllocator} (edits computed from the
 * allocation, with each share of a shared device), {@link DeviceStatusReporter} (status written on
 * the claim after prepare). A claim with admin access is prepared without taking the device from
 * the claim that owns it; an ordinary claim of a device that another prepared ordinary claim holds
 * fails, unless the device is shared ({@code allowMultipleAllocations}).
 *
 * <p><b>Health as taints</b>: an unhealthy device stays in the slices with the taint {@code
 * <driver>/unhealthy} ({@code NoSchedule}; {@link Builder#healthTaintEffect} for {@code
 * NoExecute}), its value the backend's reason; recovery removes it. Where the API server drops
 * taints, the device is left out instead ({@link ResourceSlicePublisher}).
 *
 * <p><b>Unprepare</b> removes the claim's CDI spec; a missing spec is fine. <b>Health</b>: each
 * device of the current list is HEALTHY or UNHEALTHY as the backend says; when the backend fails to
 * list its devices, the last known devices are UNKNOWN until it lists again.
 */
public final class BackendDriver implements DraDriver, DraHealthReporter, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(BackendDriver.class);

  /** The environment variable the node name is read from by default (the downward API's). */
  public static final String NODE_NAME_ENV = "NODE_NAME";

  /** The CDI class used when none is given. */
  public static final String DEFAULT_CDI_CLASS = "device";

  private final String driverName;
  private final DeviceBackend backend;
  private final Allocator allocator;
  private final KubernetesClient client;
  private final boolean ownsClient;
  private final String nodeName;
  private final String cdiKind;
  private final CdiSpecDirectory cdi;
  private final BackendDevices mapping;
  private final ClaimCheck claimCheck;
  private final ResourceSlicePublisher publisher;
  private final ClaimStatusWriter statusWriter;
  private final ClaimAllocator claimAllocator;
  private final DevicePartitions partitions;
  private final DeviceStatusReporter statusReporter;
  private final Map<String, String> heldBy = new ConcurrentHashMap<>(); // device -> claim uid
  private final ScheduledExecutorService reads;
  private final AtomicBoolean rescanQueued = new AtomicBoolean();
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();

  private volatile State state = new State(List.of(), Map.of(), null);
  private volatile DraHealthSink healthSink;
  private volatile boolean backendStarted;
  private List<Device> applied; // only on the reads thread; null before the first list

  /** The current device list, by DRA device name, and why the backend last failed (or null). */
  private record State(List<Device> devices, Map<String, Device> byName, String failure) {}

  private BackendDriver(Builder b, KubernetesClient client, boolean ownsClient, String nodeName) {
    this.driverName = b.driverName;
    this.backend = b.backend;
    this.allocator = b.backend instanceof Allocator a ? a : null;
    this.client = client;
    this.ownsClient = ownsClient;
    this.nodeName = nodeName;
    this.cdiKind = b.cdiVendor + "/" + b.cdiClass;
    this.cdi = CdiSpecDirectory.at(b.cdiDirectory);
    this.mapping =
        b.healthTaints
            ? b.mapping.withDefaultHealthTaint(driverName + "/unhealthy", b.taintEffect)
            : b.mapping;
    this.claimAllocator = b.backend instanceof ClaimAllocator c ? c : null;
    this.partitions = b.backend instanceof DevicePartitions p ? p : null;
    this.statusReporter = b.backend instanceof DeviceStatusReporter r ? r : null;
    ClaimStatusWriter.Builder status = ClaimStatusWriter.builder(client, driverName, nodeName);
    b.statusOptions.accept(status);
    this.statusWriter = status.build();
    this.claimCheck = new ClaimCheck(client, driverName, nodeName);
    ResourceSlicePublisher.Builder slices =
        ResourceSlicePublisher.builder(client, driverName, nodeName)
            .removeOnClose(b.removeSlicesOnShutdown);
    b.sliceOptions.accept(slices);
    this.publisher = slices.build();
    this.reads =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "deviceplugin4j-dra-devices-" + driverName);
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * A builder for the driver of a backend.
   *
   * @param driverName the DRA driver's name, a DNS subdomain such as {@code fpga.example.com}
   * @param backend the vendor's backend
   * @return the builder
   */
  public static Builder builder(String driverName, DeviceBackend backend) {
    return new Builder(driverName, backend);
  }

  /**
   * Starts the backend, reads its first device list and publishes it. Called by the host built with
   * {@link Builder#host()}; call it yourself when you hand the driver to {@link
   * DraPluginHost#builder(String, DraDriver)}. Idempotent.
   *
   * @throws ConfigurationException when the backend fails to start; nothing stays running
   */
  public void start() {
    if (closed.get()) {
      throw new IllegalStateException("the driver of " + driverName + " is closed");
    }
    if (!started.compareAndSet(false, true)) {
      return;
    }
    DeviceSink sink =
        new DeviceSink() {
          @Override
          public void publish(List<Device> snapshot) {
            List<Device> copy = List.copyOf(Objects.requireNonNull(snapshot, "snapshot"));
            submit(() -> apply(copy));
          }

          @Override
          public void rescan() {
            BackendDriver.this.rescan();
          }
        };
    try {
      backend.start(sink);
      backendStarted = true;
    } catch (Exception e) {
      close();
      throw new ConfigurationException(
          "the backend of DRA driver " + driverName + " failed to start: " + describe(e), e);
    }
    try {
      reads.submit(this::read).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new ConfigurationException("interrupted reading the first device list", e);
    } catch (java.util.concurrent.ExecutionException e) {
      close();
      throw new ConfigurationException("reading the first device list failed: " + e.getCause(), e);
    }
    Duration poll = backend.pollInterval();
    if (poll != null && poll.compareTo(Duration.ZERO) > 0) {
      long nanos = poll.toNanos();
      reads.scheduleWithFixedDelay(this::read, nanos, nanos, TimeUnit.NANOSECONDS);
    }
  }

  /** Asks for a call of the backend's {@code devices()} soon; repeated requests coalesce. */
  private void rescan() {
    if (rescanQueued.compareAndSet(false, true)) {
      submit(
          () -> {
            rescanQueued.set(false);
            read();
          });
    }
  }

  private void submit(Runnable task) {
    if (closed.get()) {
      return;
    }
    try {
      reads.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  /** Reads the backend's list; on the reads thread. */
  private void read() {
    List<Device> list;
    try {
      list = backend.devices();
      if (list == null) {
        throw new IllegalStateException("devices() returned null");
      }
    } catch (Exception e) {
      String failure =
          "the backend of "
              + driverName
              + " failed to list its devices: "
              + describe(e)
              + "; the last good list stays";
      LOG.warn(failure, e);
      State old = state;
      state = new State(old.devices(), old.byName(), failure);
      publishHealth();
      return;
    }
    apply(List.copyOf(list));
  }

  /** Takes a new device list; on the reads thread. */
  private void apply(List<Device> list) {
    State old = state;
    boolean changed = !list.equals(applied);
    if (!changed && old.failure() == null) {
      return;
    }
    applied = list;
    Map<String, Device> byName = new LinkedHashMap<>();
    for (Device d : list) {
      try {
        byName.putIfAbsent(BackendDevices.deviceName(d.id()), d);
      } catch (IllegalArgumentException e) {
        // reported by the mapping below
      }
    }
    state = new State(list, Map.copyOf(byName), null);
    if (changed && !closed.get()) {
      DevicePartitions.Partitions parts = DevicePartitions.Partitions.none();
      if (partitions != null) {
        try {
          parts = Objects.requireNonNull(partitions.partitions(list), "partitions() returned null");
        } catch (RuntimeException e) {
          LOG.error(
              "DRA driver {}: the backend's partitions failed ({}); publishing without counters",
              driverName,
              describe(e));
        }
      }
      BackendDevices.Mapping mapped = mapping.map(list, parts);
      mapped.problems().forEach(p -> LOG.error("DRA driver {}: {}", driverName, p));
      try {
        publisher.publish(mapped.counterSets(), mapped.draDevices());
      } catch (IllegalStateException e) {
        // the publisher is closed: the driver is stopping
      }
    }
    publishHealth();
  }

  private void publishHealth() {
    DraHealthSink sink = healthSink;
    if (sink == null) {
      return;
    }
    State s = state;
    Instant now = Instant.now();
    List<DraDeviceHealth> list = new ArrayList<>();
    for (Map.Entry<String, Device> e : new TreeMap<>(s.byName()).entrySet()) {
      DraHealthStatus status;
      String message;
      if (s.failure() != null) {
        status = DraHealthStatus.UNKNOWN;
        message = s.failure();
      } else if (e.getValue().isHealthy()) {
        status = DraHealthStatus.HEALTHY;
        message = "";
      } else {
        status = DraHealthStatus.UNHEALTHY;
        message = "the backend reports device " + e.getValue().id() + " unhealthy";
      }
      list.add(new DraDeviceHealth(nodeName, e.getKey(), status, message, now, Duration.ZERO));
    }
    sink.publish(list);
  }

  /**
   * Streams the backend devices' health to the kubelet; called by the host.
   *
   * @param sink where the host takes health lists
   */
  @Override
  public void startHealth(DraHealthSink sink) {
    this.healthSink = Objects.requireNonNull(sink, "sink");
    submit(this::publishHealth);
  }

  /** Stops streaming health; called by the host. */
  @Override
  public void stopHealth() {
    healthSink = null;
  }

  /**
   * Prepares a claim: checks it against the API server, writes its CDI spec, returns its devices.
   *
   * @param claim the claim
   * @return the prepared devices, or why the claim cannot be prepared on this node
   * @throws IOException when the CDI spec cannot be written
   */
  @Override
  public PrepareResult prepare(Claim claim) throws IOException {
    ClaimCheck.Result checked = claimCheck.check(claim.namespace(), claim.name(), claim.uid());
    if (!checked.isAllocated()) {
      return PrepareResult.failed(checked.error());
    }
    State s = state;
    List<String> problems = new ArrayList<>();
    List<Device> devices = new ArrayList<>();
    for (ClaimCheck.AllocatedDevice a : checked.devices()) {
      Device d = s.byName().get(a.device());
      if (d == null) {
        problems.add(
            "device "
                + a.device()
                + " (request "
                + a.request()
                + ") is not in the backend's current device list on node "
                + nodeName);
      } else if (!d.isHealthy() && !a.adminAccess()) {
        problems.add(
            "device "
                + a.device()
                + " (request "
                + a.request()
                + ") is unhealthy: the claim cannot be prepared until the backend reports it"
                + " healthy again");
      }
      devices.add(d);
    }
    for (ClaimCheck.AllocatedDevice a : checked.devices()) {
      String holder = exclusive(a) ? heldBy.get(a.device()) : null;
      if (holder != null && !holder.equals(claim.uid())) {
        problems.add(
            "device "
                + a.device()
                + " is prepared for claim "
                + holder
                + " on this node: it can serve one claim at a time (admin access or a shared"
                + " device excepted); the claim is retried after that claim is unprepared");
      }
    }
    if (!problems.isEmpty()) {
      return PrepareResult.failed(String.join("; ", problems));
    }
    CdiSpec.Builder spec = CdiSpec.builder(cdiKind);
    Map<String, String> annotations = new TreeMap<>();
    List<List<String>> cdiIds = new ArrayList<>();
    boolean any = false;
    if (allocator == null && claimAllocator == null) {
      for (int i = 0; i < devices.size(); i++) {
        ContainerAllocation edits = devices.get(i).allocation();
        List<String> ids = new ArrayList<>();
        if (hasEdits(edits)) {
          String name = claim.uid() + "-" + checked.devices().get(i).device();
          spec.device(name, expressible(edits));
          ids.add(cdiKind + "=" + name);
          any = true;
        }
        ids.addAll(edits.cdiDevices());
        annotations.putAll(edits.annotations());
        cdiIds.add(ids);
      }
    } else {
      Map<String, List<Integer>> byRequest = new LinkedHashMap<>();
      for (int i = 0; i < devices.size(); i++) {
        byRequest
            .computeIfAbsent(checked.devices().get(i).request(), r -> new ArrayList<>())
            .add(i);
        cdiIds.add(new ArrayList<>());
      }
      for (Map.Entry<String, List<Integer>> r : byRequest.entrySet()) {
        List<Device> group = r.getValue().stream().map(devices::get).toList();
        ContainerAllocation merged = ContainerAllocation.empty();
        for (Device d : group) {
          merged = merged.merge(d.allocation());
        }
        ContainerAllocation answer;
        try {
          if (claimAllocator != null) {
            List<ClaimAllocator.Share> shares = new ArrayList<>();
            for (int i : r.getValue()) {
              ClaimCheck.AllocatedDevice a = checked.devices().get(i);
              shares.add(
                  new ClaimAllocator.Share(
                      devices.get(i),
                      a.device(),
                      Optional.ofNullable(a.shareId()),
                      a.consumedCapacity(),
                      a.adminAccess()));
            }
            answer = claimAllocator.allocate(new ClaimAllocator.Request(claim, r.getKey(), shares));
          } else {
            answer =
                allocator.allocate(new AllocationRequest(backend.resourceName(), group, merged));
          }
        } catch (Exception e) {
          return PrepareResult.failed(
              "the backend's allocator failed for request " + r.getKey() + ": " + describe(e));
        }
        if (answer == null) {
          return PrepareResult.failed(
              "the backend's allocator returned nothing for request "
                  + r.getKey()
                  + " (a bug in the backend: return an allocation, possibly empty)");
        }
        List<String> ids = cdiIds.get(r.getValue().get(0));
        if (hasEdits(answer)) {
          String name = claim.uid() + "_" + r.getKey().replace('/', '.');
          spec.device(name, expressible(answer));
          ids.add(cdiKind + "=" + name);
          any = true;
        }
        ids.addAll(answer.cdiDevices());
        annotations.putAll(answer.annotations());
      }
    }
    if (any) {
      annotations.forEach(spec::annotation);
      CdiSpec built;
      try {
        built = spec.build();
      } catch (IllegalArgumentException e) {
        return PrepareResult.failed(e.getMessage());
      }
      cdi.write(built, transientId(claim));
    }
    List<PreparedDevice> out = new ArrayList<>();
    for (int i = 0; i < devices.size(); i++) {
      ClaimCheck.AllocatedDevice a = checked.devices().get(i);
      List<String> ids = cdiIds.get(i);
      for (String id : ids) {
        String problem = CdiNames.problem(id);
        if (problem != null) {
          return PrepareResult.failed(problem);
        }
      }
      out.add(new PreparedDevice(List.of(a.request()), a.pool(), a.device(), ids));
    }
    for (ClaimCheck.AllocatedDevice a : checked.devices()) {
      if (exclusive(a)) {
        heldBy.put(a.device(), claim.uid());
      }
    }
    reportStatus(claim, checked.devices(), devices);
    return PrepareResult.prepared(out);
  }

  /** Whether preparing this allocation takes the device for its claim alone. */
  private static boolean exclusive(ClaimCheck.AllocatedDevice a) {
    return !a.adminAccess() && a.shareId() == null;
  }

  private void reportStatus(
      Claim claim, List<ClaimCheck.AllocatedDevice> allocated, List<Device> devices) {
    if (statusReporter == null) {
      return;
    }
    ClaimStatusWriter.ClaimRef ref = ref(claim);
    for (int i = 0; i < devices.size(); i++) {
      DeviceStatusReporter.DeviceStatus status;
      try {
        status = statusReporter.deviceStatus(devices.get(i));
      } catch (RuntimeException e) {
        LOG.warn(
            "DRA driver {}: the backend's status of device {} failed: {}",
            driverName,
            allocated.get(i).device(),
            describe(e));
        continue;
      }
      if (status == null) {
        continue;
      }
      AllocatedDeviceStatusBuilder entry =
          new AllocatedDeviceStatusBuilder()
              .withDevice(allocated.get(i).device())
              .withShareID(allocated.get(i).shareId());
      if (status.interfaceName() != null
          || status.hardwareAddress() != null
          || !status.ips().isEmpty()) {
        entry.withNetworkData(
            new NetworkDeviceData(
                status.hardwareAddress(),
                status.interfaceName(),
                status.ips().isEmpty() ? null : status.ips()));
      }
      if (!status.data().isEmpty()) {
        entry.withData(status.data());
      }
      try {
        statusWriter.set(ref, entry.build());
      } catch (IllegalArgumentException e) {
        LOG.error("DRA driver {}: device status not written: {}", driverName, e.getMessage());
      }
    }
  }

  private static ClaimStatusWriter.ClaimRef ref(Claim claim) {
    return new ClaimStatusWriter.ClaimRef(claim.namespace(), claim.name(), claim.uid());
  }

  /**
   * Reports that a device of a claim is attached: each of the device's binding conditions (see
   * {@link BackendDevices.Builder#bindingConditions}) is set True on the claim's device status, so
   * the scheduler binds the pod (KEP-5007). The write is retried until it lands.
   *
   * @param claim the claim the device is allocated to
   * @param deviceName the DRA device name
   * @return completes once the conditions are in the API server
   * @throws IllegalArgumentException when the device is unknown or declares no binding conditions
   */
  public CompletableFuture<Void> deviceAttached(Claim claim, String deviceName) {
    BackendDevices.BindingConditions conditions = bindingConditions(deviceName);
    List<io.fabric8.kubernetes.api.model.Condition> list = new ArrayList<>();
    for (String type : conditions.conditions()) {
      list.add(condition(type, "Attached", "device " + deviceName + " is attached"));
    }
    return statusWriter.set(
        ref(claim),
        new AllocatedDeviceStatusBuilder().withDevice(deviceName).withConditions(list).build());
  }

  /**
   * Reports that attaching a device of a claim failed: the device's first binding failure condition
   * is set True, so the scheduler gives up this node and tries again.
   *
   * @param claim the claim the device is allocated to
   * @param deviceName the DRA device name
   * @param message why, for people
   * @return completes once the condition is in the API server
   * @throws IllegalArgumentException when the device is unknown or declares no binding conditions
   */
  public CompletableFuture<Void> deviceAttachFailed(
      Claim claim, String deviceName, String message) {
    BackendDevices.BindingConditions conditions = bindingConditions(deviceName);
    return statusWriter.set(
        ref(claim),
        new AllocatedDeviceStatusBuilder()
            .withDevice(deviceName)
            .withConditions(
                condition(conditions.failureConditions().get(0), "AttachFailed", message))
            .build());
  }

  private BackendDevices.BindingConditions bindingConditions(String deviceName) {
    Device d = state.byName().get(deviceName);
    if (d == null) {
      throw new IllegalArgumentException(
          "device " + deviceName + " is not in the backend's current device list");
    }
    BackendDevices.BindingConditions c = mapping.bindingConditionsOf(d);
    if (c == null || c.conditions().isEmpty()) {
      throw new IllegalArgumentException(
          "device "
              + deviceName
              + " declares no binding conditions: set them with"
              + " BackendDevices.builder().bindingConditions(...)");
    }
    return c;
  }

  private static io.fabric8.kubernetes.api.model.Condition condition(
      String type, String reason, String message) {
    return new ConditionBuilder()
        .withType(type)
        .withStatus("True")
        .withReason(reason)
        .withMessage(message)
        .withLastTransitionTime(
            java.time.format.DateTimeFormatter.ISO_INSTANT.format(
                Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)))
        .build();
  }

  /**
   * The writer of this driver's entries in claims' {@code status.devices}, for drivers that report
   * more than {@link DeviceStatusReporter} does.
   *
   * @return the writer
   */
  public ClaimStatusWriter claimStatus() {
    return statusWriter;
  }

  /**
   * Removes the claim's CDI spec; a spec that is already gone is fine.
   *
   * @param claim the claim
   * @param prepared what {@link #prepare} returned for it
   * @throws IOException when the spec exists but cannot be removed
   */
  @Override
  public void unprepare(Claim claim, List<PreparedDevice> prepared) throws IOException {
    cdi.remove(cdiKind, transientId(claim));
    heldBy.values().removeIf(uid -> uid.equals(claim.uid()));
  }

  /**
   * The CDI spec file of a claim, whether it exists or not.
   *
   * @param claimUid the claim's UID
   * @return {@code <cdi dir>/<vendor>-<class>_claim-<uid>.json}
   */
  public Path cdiSpecFile(String claimUid) {
    return cdi.fileFor(cdiKind, "claim-" + claimUid);
  }

  /**
   * The pool this driver publishes its devices in: the node's name.
   *
   * @return the pool name
   */
  public String poolName() {
    return nodeName;
  }

  /**
   * The slice publisher, for its statistics.
   *
   * @return the publisher
   */
  public ResourceSlicePublisher slices() {
    return publisher;
  }

  /**
   * Stops the device reads and the backend, then the slice publisher (which removes the slices when
   * configured to), then the Kubernetes client when the driver created it. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    reads.shutdownNow();
    try {
      reads.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (backendStarted) {
      try {
        backend.stop();
      } catch (RuntimeException e) {
        LOG.warn("The backend of DRA driver {} failed to stop cleanly", driverName, e);
      }
    }
    publisher.close();
    statusWriter.close();
    if (ownsClient) {
      client.close();
    }
  }

  private static String transientId(Claim claim) {
    return "claim-" + claim.uid();
  }

  private static boolean hasEdits(ContainerAllocation a) {
    return !a.deviceNodes().isEmpty() || !a.mounts().isEmpty() || !a.env().isEmpty();
  }

  private static ContainerAllocation expressible(ContainerAllocation a) {
    return new ContainerAllocation(a.env(), a.mounts(), a.deviceNodes(), Map.of(), List.of());
  }

  private static String describe(Throwable e) {
    String m = e.getMessage();
    return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
  }

  /** Configures a {@link BackendDriver}; not thread-safe. */
  public static final class Builder {
    private final String driverName;
    private final DeviceBackend backend;
    private KubernetesClient client;
    private String nodeName;
    private Path cdiDirectory = CdiSpecDirectory.DEFAULT_DIRECTORY;
    private String cdiVendor;
    private String cdiClass = DEFAULT_CDI_CLASS;
    private BackendDevices mapping = BackendDevices.defaults();
    private boolean removeSlicesOnShutdown;
    private Consumer<ResourceSlicePublisher.Builder> sliceOptions = b -> {};
    private Consumer<ClaimStatusWriter.Builder> statusOptions = b -> {};
    private boolean healthTaints = true;
    private BackendDevices.TaintEffect taintEffect = BackendDevices.TaintEffect.NO_SCHEDULE;
    private Function<String, String> env = System::getenv;

    private Builder(String driverName, DeviceBackend backend) {
      this.driverName = Objects.requireNonNull(driverName, "driverName");
      this.backend = Objects.requireNonNull(backend, "backend");
      this.cdiVendor = driverName;
    }

    /**
     * The Kubernetes client (default: one built from the environment, in-cluster when run in a pod,
     * closed with the driver). A client passed here is not closed by the driver.
     *
     * @param value the client; needs get on resourceclaims and nodes, and write on resourceslices
     * @return this builder
     */
    public Builder kubernetesClient(KubernetesClient value) {
      this.client = Objects.requireNonNull(value, "kubernetesClient");
      return this;
    }

    /**
     * This node's name, also the pool's (default: the {@value #NODE_NAME_ENV} environment variable,
     * set from the downward API's {@code spec.nodeName}).
     *
     * @param value the node name
     * @return this builder
     */
    public Builder nodeName(String value) {
      this.nodeName = Objects.requireNonNull(value, "nodeName");
      return this;
    }

    /**
     * Where the claims' CDI specs are written (default {@code /var/run/cdi}, where containerd and
     * CRI-O look for dynamic specs).
     *
     * @param value the directory
     * @return this builder
     */
    public Builder cdiDirectory(Path value) {
      this.cdiDirectory = Objects.requireNonNull(value, "cdiDirectory");
      return this;
    }

    /**
     * The CDI kind of the claims' specs, {@code vendor/class} (default: the driver name and {@value
     * #DEFAULT_CDI_CLASS}).
     *
     * @param vendor e.g. {@code fpga.example.com}
     * @param clazz e.g. {@code fpga}
     * @return this builder
     */
    public Builder cdiKind(String vendor, String clazz) {
      this.cdiVendor = Objects.requireNonNull(vendor, "vendor");
      this.cdiClass = Objects.requireNonNull(clazz, "clazz");
      return this;
    }

    /**
     * How backend devices become DRA devices: attributes, capacities, whether unhealthy devices are
     * published (default {@link BackendDevices#defaults()}).
     *
     * @param value the mapping
     * @return this builder
     */
    public Builder mapping(BackendDevices value) {
      this.mapping = Objects.requireNonNull(value, "mapping");
      return this;
    }

    /**
     * Whether the driver deletes its ResourceSlices when it stops (default false: a restarting
     * driver keeps its devices visible to the scheduler). Turn it on for an uninstall.
     *
     * @param value true to delete the slices on shutdown
     * @return this builder
     */
    public Builder removeSlicesOnShutdown(boolean value) {
      this.removeSlicesOnShutdown = value;
      return this;
    }

    /**
     * Tunes the slice publisher (backoff, resync interval, coalescing, the node's UID).
     *
     * @param options called with the publisher's builder before it is built
     * @return this builder
     */
    public Builder sliceOptions(Consumer<ResourceSlicePublisher.Builder> options) {
      this.sliceOptions = Objects.requireNonNull(options, "sliceOptions");
      return this;
    }

    /**
     * Tunes the writer of claims' device status (backoff).
     *
     * @param options called with the writer's builder before it is built
     * @return this builder
     */
    public Builder statusOptions(Consumer<ClaimStatusWriter.Builder> options) {
      this.statusOptions = Objects.requireNonNull(options, "statusOptions");
      return this;
    }

    /**
     * Whether an unhealthy device stays in the slices with the taint {@code <driver>/unhealthy}
     * (default true, what Kubernetes 1.37 does with device taints) or is left out of them (false,
     * the behaviour before taints). A mapping with its own {@link
     * BackendDevices.Builder#healthTaint} keeps it.
     *
     * @param value false to leave unhealthy devices out
     * @return this builder
     */
    public Builder healthTaints(boolean value) {
      this.healthTaints = value;
      return this;
    }

    /**
     * The effect of the health taint (default {@link BackendDevices.TaintEffect#NO_SCHEDULE}: no
     * new claims get the device). {@link BackendDevices.TaintEffect#NO_EXECUTE} also evicts the
     * pods using it: opt in when a broken device cannot serve its pods any more.
     *
     * @param value the effect
     * @return this builder
     */
    public Builder healthTaintEffect(BackendDevices.TaintEffect value) {
      this.taintEffect = Objects.requireNonNull(value, "healthTaintEffect");
      return this;
    }

    /** The environment, for tests. */
    Builder environment(Function<String, String> value) {
      this.env = value;
      return this;
    }

    /**
     * Checks the configuration and builds the driver, not yet started: call {@link
     * BackendDriver#start()}, or use {@link #host()}.
     *
     * @return the driver
     * @throws ConfigurationException naming what is missing or invalid
     */
    public BackendDriver build() {
      String node = nodeName != null ? nodeName : env.apply(NODE_NAME_ENV);
      if (node == null || node.isBlank()) {
        throw new ConfigurationException(
            "the DRA driver "
                + driverName
                + " needs the node's name: set "
                + NODE_NAME_ENV
                + " from the downward API (fieldRef spec.nodeName) or call nodeName(...)");
      }
      String kind = cdiVendor + "/" + cdiClass;
      String problem = CdiNames.problem(kind + "=x");
      if (problem != null) {
        throw new ConfigurationException(
            "CDI kind " + kind + " is invalid (" + problem + "): choose another with cdiKind()");
      }
      boolean owns = client == null;
      KubernetesClient c = owns ? new KubernetesClientBuilder().build() : client;
      try {
        return new BackendDriver(this, c, owns, node);
      } catch (IllegalArgumentException e) {
        if (owns) {
          c.close();
        }
        throw new ConfigurationException(e.getMessage(), e);
      }
    }

    /**
     * Builds the driver and a host for it: the host starts the driver (backend, first device list,
     * slices) before it serves, and stops it after it stopped serving. Configure the host further
     * (plugin directory, rolling update) and {@code start()} or {@code run()} it.
     *
     * @return the host's builder
     * @throws ConfigurationException naming what is missing or invalid
     */
    public DraPluginHost.Builder host() {
      BackendDriver driver = build();
      return DraPluginHost.builder(driverName, driver).owning(driver::start, driver);
    }
  }
}
