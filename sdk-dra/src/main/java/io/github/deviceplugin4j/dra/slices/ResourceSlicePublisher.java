package io.github.deviceplugin4j.dra.slices;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes a node's devices as the ResourceSlices of one pool, the way the scheduler reads them.
 *
 * <p>The pool is named after the node. Devices are split into slices of at most {@value
 * #MAX_DEVICES_PER_SLICE}, sorted by name; every slice carries {@code spec.driver}, {@code
 * spec.nodeName}, the pool's name, generation and {@code resourceSliceCount}, and an owner
 * reference to the Node, so the garbage collector removes the slices with the node.
 *
 * <p>Only effective changes are written: a device list equal to the last one published costs no API
 * call, and a sync that finds the pool as wanted writes nothing. On a change the pool generation is
 * bumped and every slice is rewritten with it (the scheduler ignores slices of an older
 * generation), then slices no longer needed are deleted. Work runs on one thread of the publisher's
 * own; updates that arrive while it works are coalesced into one sync. A failed sync (a conflict,
 * the API server away) is retried with exponential backoff until it succeeds or the publisher is
 * closed.
 *
 * <p>Slices deleted or changed by someone else are restored: once it has something to publish, the
 * publisher watches its own slices (by their labels) and, when one it wants is deleted or changed
 * in a way it did not write, syncs the pool again after the coalescing delay (so a burst of events
 * costs one list, and at most the writes it needs). The kubelet deletes every ResourceSlice of its
 * node when its DRA registration handler starts (each kubelet start from 1.32: {@code
 * wipeResourceSlices} in {@code pkg/kubelet/cm/dra/plugin/registration.go}), and a driver's slices
 * some time after its last plugin deregistered; upstream's Go helper restores them from an informer
 * on its own slices, this publisher from a watch. Its own writes trigger no sync (it remembers the
 * resource versions it wrote), so there is no loop. When the watch ends for good (the client gives
 * up reconnecting, e.g. after "410 Gone"), it is opened again after the initial backoff and the
 * pool is synced; the periodic resync ({@link Builder#resyncInterval}) stays as a safety net.
 *
 * <p>What is written is checked first with {@link SliceValidation} (upstream's validation rules): a
 * device or counter set the API server would refuse is left out with an error log naming it and the
 * limit, and the rest is published. Shared counter sets ({@link #publish(List, List)}, for
 * partitionable devices) go into slices of their own, before the device slices, as the API
 * requires; a slice with a device that has taints or consumes counters holds at most {@value
 * SliceValidation#MAX_DEVICES_WITH_TAINTS_OR_COUNTERS} devices.
 *
 * <p>Device taints: when the API server drops them (the {@code DRADeviceTaints} gate is off, or the
 * server is older), the publisher sees it in the slice it gets back, logs it once, and from then on
 * leaves out every device with a {@code NoSchedule} or {@code NoExecute} taint (the only way left
 * to keep the scheduler off it) and publishes other devices without their taints.
 *
 * <p>Slice names are deterministic: {@code <index as 5 hex digits>-<driver>-<node>} (shortened with
 * a hash when longer than 253 characters). Upstream's Go controller uses the same prefix with
 * {@code generateName}; a fixed name makes a create idempotent instead: a retried create, or a
 * second instance of the driver during a rolling update, gets "already exists" instead of adding a
 * duplicate slice with the same devices. The slices are also labelled with the driver and pool, and
 * found by those labels.
 *
 * <pre>{@code
 * try (ResourceSlicePublisher slices =
 *     ResourceSlicePublisher.builder(client, "fpga.example.com", nodeName).build()) {
 *   slices.publish(BackendDevices.defaults().map(backend.devices()).draDevices());
 *   ...
 * }
 * }</pre>
 */
public final class ResourceSlicePublisher implements AutoCloseable {

  /**
   * The most devices one ResourceSlice may hold (resource.k8s.io/v1); {@value
   * SliceValidation#MAX_DEVICES_WITH_TAINTS_OR_COUNTERS} when a device has taints or consumes
   * counters.
   */
  public static final int MAX_DEVICES_PER_SLICE = SliceValidation.MAX_DEVICES;

  /** Label with the driver name on every slice this publisher writes. */
  public static final String DRIVER_LABEL = "dra.deviceplugin4j.io/driver";

  /** Label with the pool name (or its hash, when not a valid label value) on every slice. */
  public static final String POOL_LABEL = "dra.deviceplugin4j.io/pool";

  private static final Logger log = LoggerFactory.getLogger(ResourceSlicePublisher.class);
  private static final int MAX_NAME_LENGTH = 253;
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

  private final KubernetesClient client;
  private final String driverName;
  private final String nodeName;
  private final Map<String, String> labels;
  private final Duration coalesceDelay;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final boolean removeOnClose;
  private final Duration closeTimeout;
  private final ScheduledExecutorService worker;

  private final AtomicLong creates = new AtomicLong();
  private final AtomicLong updates = new AtomicLong();
  private final AtomicLong deletes = new AtomicLong();
  private final AtomicLong conflicts = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong repairs = new AtomicLong();

  // Only touched on the worker thread: "name@resourceVersion" of each own write whose watch event
  // has not arrived yet, and per name the own deletes whose event has not arrived yet.
  private final Set<String> ownWrites = new HashSet<>();
  private final Map<String, Integer> ownDeletes = new HashMap<>();

  /** What the pool should hold: shared counter sets and devices, both sorted by name. */
  private record Pool(List<CounterSet> counters, List<Device> devices) {}

  private volatile boolean taintsDropped;

  // Guarded by this.
  private Pool desired; // null: the pool is to be removed
  private boolean hasDesired;
  private long requestedVersion;
  private boolean forceSync;
  private boolean scheduled;
  private boolean closed;
  private final List<Pending> pending = new ArrayList<>();

  // Only touched on the worker thread.
  private String nodeUid;
  private Pool lastPublished;
  private boolean lastPublishedKnown;
  private Duration backoff;
  private Watch watch; // guarded by this
  private boolean watchWanted; // guarded by this: open (again) on the next run

  private record Pending(long version, CompletableFuture<Void> future) {}

  private ResourceSlicePublisher(Builder b) {
    this.client = b.client;
    this.driverName = b.driverName;
    this.nodeName = b.nodeName;
    this.nodeUid = b.nodeUid;
    this.coalesceDelay = b.coalesceDelay;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.backoff = b.initialBackoff;
    this.removeOnClose = b.removeOnClose;
    this.watchWanted = b.watchSlices;
    this.closeTimeout = b.closeTimeout;
    this.labels = Map.of(DRIVER_LABEL, driverName, POOL_LABEL, labelValue(nodeName));
    this.worker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "dra-slices-" + driverName);
              t.setDaemon(true);
              return t;
            });
    if (!b.resyncInterval.isZero() && !b.resyncInterval.isNegative()) {
      long millis = b.resyncInterval.toMillis();
      worker.scheduleWithFixedDelay(this::resync, millis, millis, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * A builder for the publisher of one driver's pool on one node.
   *
   * @param client the Kubernetes client; the publisher does not close it
   * @param driverName the DRA driver name, a DNS subdomain of at most 63 characters
   * @param nodeName the node's name; also the pool's name
   * @return a new builder
   */
  public static Builder builder(KubernetesClient client, String driverName, String nodeName) {
    return new Builder(client, driverName, nodeName);
  }

  /**
   * The name of slice {@code index} of a driver's pool on a node.
   *
   * @param driverName the driver
   * @param nodeName the node
   * @param index the slice's index in the pool, from zero
   * @return a DNS subdomain of at most 253 characters
   */
  public static String sliceName(String driverName, String nodeName, int index) {
    String prefix = String.format("%05x-", index);
    String rest = driverName + "-" + nodeName;
    if (prefix.length() + rest.length() <= MAX_NAME_LENGTH) {
      return prefix + rest;
    }
    String hash = sha256Hex(rest).substring(0, 10);
    String cut = rest.substring(0, MAX_NAME_LENGTH - prefix.length() - hash.length() - 1);
    cut = cut.replaceAll("[-.]+$", "");
    return prefix + cut + "-" + hash;
  }

  /**
   * The pool this publisher writes: the node's name.
   *
   * @return the pool name
   */
  public String poolName() {
    return nodeName;
  }

  /**
   * Sets the complete device list of the pool and publishes it in the background.
   *
   * @param devices every device of the pool, with unique names; order does not matter
   * @return completes once this list, or a newer one, is in the API server
   * @throws IllegalArgumentException if two devices share a name or one has none
   * @throws IllegalStateException if the publisher is closed
   */
  public CompletableFuture<Void> publish(List<Device> devices) {
    return publish(List.of(), devices);
  }

  /**
   * Sets the complete content of the pool, shared counter sets (for partitionable devices) and
   * devices, and publishes it in the background. A counter set or device the API server would
   * refuse ({@link SliceValidation}) is left out with an error log that names it and what to fix,
   * and so is a device that consumes from a counter set that is not published; the rest is
   * published.
   *
   * @param counterSets the pool's shared counter sets, with unique names
   * @param devices every device of the pool, with unique names; order does not matter
   * @return completes once this content, or a newer one, is in the API server
   * @throws IllegalArgumentException if two devices share a name or one has none
   * @throws IllegalStateException if the publisher is closed
   */
  public CompletableFuture<Void> publish(List<CounterSet> counterSets, List<Device> devices) {
    Objects.requireNonNull(counterSets, "counterSets");
    Objects.requireNonNull(devices, "devices");
    List<Device> sorted = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (Device d : devices) {
      if (d.getName() == null || d.getName().isEmpty()) {
        throw new IllegalArgumentException("a device has no name: every DRA device needs one");
      }
      if (!names.add(d.getName())) {
        throw new IllegalArgumentException(
            "device name '" + d.getName() + "' appears twice: names are unique in a pool");
      }
    }
    Map<String, CounterSet> sets = new java.util.TreeMap<>();
    for (CounterSet c : counterSets) {
      List<String> problems = SliceValidation.counterSet(c);
      if (!problems.isEmpty()) {
        log.error(
            "driver {}: counter set '{}' is left out of pool {} (and the devices that consume it): {}",
            driverName,
            c.getName(),
            nodeName,
            String.join("; ", problems));
      } else if (sets.putIfAbsent(c.getName(), c) != null) {
        log.error(
            "driver {}: counter set '{}' appears twice; the second one is left out",
            driverName,
            c.getName());
      }
    }
    for (Device d : devices) {
      List<String> problems = new ArrayList<>(SliceValidation.device(d));
      if (d.getConsumesCounters() != null) {
        for (var c : d.getConsumesCounters()) {
          if (!sets.containsKey(c.getCounterSet())) {
            problems.add(
                "device '"
                    + d.getName()
                    + "' consumes from counter set '"
                    + c.getCounterSet()
                    + "', which the pool does not publish");
          }
        }
      }
      if (problems.isEmpty()) {
        sorted.add(d);
      } else {
        log.error(
            "driver {}: device '{}' is left out of pool {}, the API server would refuse it: {}",
            driverName,
            d.getName(),
            nodeName,
            String.join("; ", problems));
      }
    }
    sorted.sort(Comparator.comparing(Device::getName));
    return request(new Pool(List.copyOf(sets.values()), List.copyOf(sorted)), false);
  }

  /**
   * Whether the API server keeps device taints. False once a written slice came back without the
   * taints it was sent with: tainted devices are then left out instead (see the class comment).
   *
   * @return true until the API server was seen dropping taints
   */
  public boolean taintsSupported() {
    return !taintsDropped;
  }

  /**
   * Deletes every slice of the pool (for an uninstall); a later {@link #publish(List)} publishes
   * again.
   *
   * @return completes once no slice of the pool is left
   * @throws IllegalStateException if the publisher is closed
   */
  public CompletableFuture<Void> removeAll() {
    return request(null, false);
  }

  /**
   * Reads the pool back from the API server and repairs any difference (a slice deleted or edited
   * by someone else). Also runs every resync interval.
   *
   * @return completes once the pool is as wanted again
   */
  public CompletableFuture<Void> resync() {
    synchronized (this) {
      if (!hasDesired) {
        return CompletableFuture.completedFuture(null);
      }
      return request(desired, true);
    }
  }

  /**
   * Counts of what the publisher did, for logs, metrics and tests.
   *
   * @return the current counts
   */
  public Stats stats() {
    return new Stats(creates.get(), updates.get(), deletes.get(), conflicts.get(), failures.get());
  }

  /**
   * How often the watch saw a slice of the pool deleted or changed by someone else and the pool was
   * synced again.
   *
   * @return the number of repairs started
   */
  public long repairs() {
    return repairs.get();
  }

  /**
   * Stops publishing. When built with {@link Builder#removeOnClose(boolean)}, first deletes the
   * pool's slices, waiting at most the close timeout. Pending futures fail.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
    }
    if (removeOnClose) {
      try {
        removeAll().get(closeTimeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        log.warn(
            "could not delete the ResourceSlices of pool {} of driver {} on close: {}",
            nodeName,
            driverName,
            e.toString());
      }
    }
    List<Pending> left;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      left = new ArrayList<>(pending);
      pending.clear();
      if (watch != null) {
        watch.close();
        watch = null;
      }
    }
    worker.shutdownNow();
    for (Pending p : left) {
      p.future.completeExceptionally(
          new IllegalStateException("the ResourceSlice publisher was closed before publishing"));
    }
  }

  private synchronized CompletableFuture<Void> request(Pool devices, boolean force) {
    if (closed) {
      throw new IllegalStateException("the ResourceSlice publisher is closed");
    }
    desired = devices;
    hasDesired = true;
    forceSync |= force;
    long version = ++requestedVersion;
    CompletableFuture<Void> future = new CompletableFuture<>();
    pending.add(new Pending(version, future));
    scheduleLocked(coalesceDelay);
    return future;
  }

  private void scheduleLocked(Duration delay) {
    if (!scheduled && !closed) {
      scheduled = true;
      worker.schedule(this::run, delay.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private void run() {
    long version;
    Pool want;
    boolean force;
    synchronized (this) {
      scheduled = false;
      if (closed) {
        return;
      }
      version = requestedVersion;
      want = desired;
      force = forceSync;
      forceSync = false;
    }
    try {
      openWatchIfWanted();
      if (!force && lastPublishedKnown && Objects.equals(want, lastPublished)) {
        log.debug("pool {} of driver {} unchanged: nothing to write", nodeName, driverName);
      } else if (want == null) {
        deleteAll();
      } else {
        sync(want);
      }
      lastPublished = want;
      lastPublishedKnown = true;
      backoff = initialBackoff;
      List<Pending> done = new ArrayList<>();
      synchronized (this) {
        for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
          Pending p = it.next();
          if (p.version <= version) {
            done.add(p);
            it.remove();
          }
        }
        if (requestedVersion > version) {
          scheduleLocked(coalesceDelay);
        }
      }
      done.forEach(p -> p.future.complete(null));
    } catch (RuntimeException e) {
      lastPublishedKnown = false;
      if (isConflict(e)) {
        conflicts.incrementAndGet();
        log.info(
            "conflict writing the ResourceSlices of pool {} of driver {}; retrying in {} ms",
            nodeName,
            driverName,
            backoff.toMillis());
      } else {
        failures.incrementAndGet();
        log.warn(
            "could not publish the ResourceSlices of pool {} of driver {}; retrying in {} ms: {}",
            nodeName,
            driverName,
            backoff.toMillis(),
            e.toString());
      }
      Duration wait = jitter(backoff);
      Duration doubled = backoff.multipliedBy(2);
      backoff = doubled.compareTo(maxBackoff) > 0 ? maxBackoff : doubled;
      synchronized (this) {
        forceSync |= force;
        scheduleLocked(wait);
      }
    }
  }

  private static Duration jitter(Duration d) {
    long nanos = d.toNanos();
    return Duration.ofNanos(nanos + ThreadLocalRandom.current().nextLong(nanos / 4 + 1));
  }

  private static boolean isConflict(RuntimeException e) {
    return e instanceof KubernetesClientException k && k.getCode() == 409;
  }

  private NonNamespaceOperation<ResourceSlice, ResourceSliceList, Resource<ResourceSlice>> api() {
    return client.dynamicResourceAllocation().v1().resourcesSlices();
  }

  /** The slices of this pool now in the API server. */
  private List<ResourceSlice> existing() {
    List<ResourceSlice> found = new ArrayList<>();
    for (ResourceSlice s : api().withLabels(labels).list().getItems()) {
      if (s.getSpec() != null
          && driverName.equals(s.getSpec().getDriver())
          && s.getSpec().getPool() != null
          && nodeName.equals(s.getSpec().getPool().getName())) {
        found.add(s);
      }
    }
    return found;
  }

  /** The devices to write: without tainted devices when the API server drops taints. */
  private List<Device> effective(List<Device> devices) {
    if (!taintsDropped) {
      return devices;
    }
    List<Device> out = new ArrayList<>();
    for (Device d : devices) {
      List<io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint> taints = d.getTaints();
      if (taints == null || taints.isEmpty()) {
        out.add(d);
      } else if (taints.stream().allMatch(t -> "None".equals(t.getEffect()))) {
        out.add(
            new DeviceBuilder(d)
                .withTaints((List<io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint>) null)
                .build());
      }
    }
    return out;
  }

  /** One slice's content: counter sets (devices null) or devices (counter sets null). */
  private record Chunk(List<CounterSet> counters, List<Device> devices) {}

  private static List<Chunk> chunks(List<CounterSet> counters, List<Device> devices) {
    List<Chunk> chunks = new ArrayList<>();
    for (int i = 0; i < counters.size(); i += SliceValidation.MAX_COUNTER_SETS) {
      chunks.add(
          new Chunk(
              counters.subList(i, Math.min(counters.size(), i + SliceValidation.MAX_COUNTER_SETS)),
              null));
    }
    List<Device> current = new ArrayList<>();
    boolean limited = false;
    for (Device d : devices) {
      boolean l = limited || SliceValidation.limitsSlice(d);
      int max = l ? SliceValidation.MAX_DEVICES_WITH_TAINTS_OR_COUNTERS : MAX_DEVICES_PER_SLICE;
      if (current.size() + 1 > max) {
        chunks.add(new Chunk(null, List.copyOf(current)));
        current = new ArrayList<>();
        l = SliceValidation.limitsSlice(d);
      }
      current.add(d);
      limited = l;
    }
    if (!current.isEmpty() || chunks.isEmpty()) {
      // An empty pool is published as one empty slice: "no devices" differs from "no driver".
      chunks.add(new Chunk(null, List.copyOf(current)));
    }
    return chunks;
  }

  private void sync(Pool pool) {
    sync(pool, true);
  }

  private void sync(Pool pool, boolean checkTaints) {
    OwnerReference owner = owner();
    List<Chunk> chunks = chunks(pool.counters(), effective(pool.devices()));
    List<Device> devices = pool.devices();
    List<ResourceSlice> current = existing();
    Map<String, ResourceSlice> byName = new HashMap<>();
    long generation = 0;
    Set<Long> generations = new HashSet<>();
    for (ResourceSlice s : current) {
      byName.put(s.getMetadata().getName(), s);
      long g =
          s.getSpec().getPool().getGeneration() == null ? 0 : s.getSpec().getPool().getGeneration();
      generation = Math.max(generation, g);
      generations.add(g);
    }
    List<String> names = new ArrayList<>();
    for (int i = 0; i < chunks.size(); i++) {
      names.add(sliceName(driverName, nodeName, i));
    }
    boolean upToDate = current.size() == chunks.size() && generations.size() <= 1;
    for (int i = 0; upToDate && i < chunks.size(); i++) {
      ResourceSlice s = byName.get(names.get(i));
      upToDate = s != null && matches(s, chunks.get(i), chunks.size(), owner);
    }
    if (upToDate) {
      log.debug("pool {} of driver {} is up to date", nodeName, driverName);
      return;
    }
    long next = generation + 1;
    Set<String> wanted = new HashSet<>(names);
    for (ResourceSlice s : current) {
      if (!wanted.contains(s.getMetadata().getName())) {
        delete(s);
      }
    }
    List<ResourceSlice> written = new ArrayList<>();
    for (int i = 0; i < chunks.size(); i++) {
      ResourceSlice old = byName.get(names.get(i));
      ResourceSliceBuilder builder =
          old == null ? new ResourceSliceBuilder() : new ResourceSliceBuilder(old);
      Chunk chunk = chunks.get(i);
      ResourceSlice slice =
          builder
              .editOrNewMetadata()
              .withName(names.get(i))
              .addToLabels(labels)
              .withOwnerReferences(owner)
              .endMetadata()
              .withNewSpec()
              .withDriver(driverName)
              .withNodeName(nodeName)
              .withPool(new ResourcePool(next, nodeName, (long) chunks.size()))
              .withDevices(chunk.devices())
              .withSharedCounters(chunk.counters())
              .endSpec()
              .build();
      List<String> problems = SliceValidation.slice(slice.getSpec());
      if (!problems.isEmpty()) {
        // Cannot happen for what publish() let through; a bug if it does.
        throw new IllegalStateException(
            "slice " + names.get(i) + " would be refused: " + String.join("; ", problems));
      }
      ResourceSlice stored;
      if (old == null) {
        stored = create(slice);
      } else {
        stored = api().resource(slice).update();
        remember(stored);
        updates.incrementAndGet();
      }
      written.add(stored);
    }
    if (checkTaints && !taintsDropped && taintsMissing(written, chunks, names)) {
      taintsDropped = true;
      log.warn(
          "the API server dropped the device taints of driver {} (feature gate DRADeviceTaints off,"
              + " or a server older than 1.33): from now on devices with a NoSchedule or NoExecute"
              + " taint, such as unhealthy devices, are left out of the ResourceSlices instead",
          driverName);
      sync(pool, false);
      return;
    }
    log.info(
        "published {} devices in {} ResourceSlices of pool {} (generation {}) for driver {}",
        devices.size(),
        chunks.size(),
        nodeName,
        next,
        driverName);
  }

  /**
   * Creates a slice; when one of that name exists without our labels (edited by someone, or written
   * by another instance of the driver a moment ago), takes it over with an update.
   */
  private ResourceSlice create(ResourceSlice slice) {
    String name = slice.getMetadata().getName();
    try {
      ResourceSlice stored = api().resource(slice).create();
      remember(stored);
      creates.incrementAndGet();
      return stored;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      ResourceSlice found =
          api().withField("metadata.name", name).list().getItems().stream()
              .findFirst()
              .orElseThrow(() -> e);
      slice.getMetadata().setResourceVersion(found.getMetadata().getResourceVersion());
      ResourceSlice stored = api().resource(slice).update();
      remember(stored);
      updates.incrementAndGet();
      return stored;
    }
  }

  /** Whether a device sent with taints came back (or is stored) without them. */
  private static boolean taintsMissing(
      List<ResourceSlice> stored, List<Chunk> chunks, List<String> names) {
    Map<String, ResourceSlice> byName = new HashMap<>();
    for (ResourceSlice s : stored) {
      if (s != null && s.getMetadata() != null) {
        byName.put(s.getMetadata().getName(), s);
      }
    }
    for (int i = 0; i < chunks.size(); i++) {
      List<Device> sent = chunks.get(i).devices();
      ResourceSlice s = byName.get(names.get(i));
      if (sent == null || s == null || s.getSpec() == null || s.getSpec().getDevices() == null) {
        continue;
      }
      Map<String, Device> back = new HashMap<>();
      s.getSpec().getDevices().forEach(d -> back.put(d.getName(), d));
      for (Device d : sent) {
        Device b = back.get(d.getName());
        if (d.getTaints() != null
            && !d.getTaints().isEmpty()
            && b != null
            && (b.getTaints() == null || b.getTaints().isEmpty())) {
          return true;
        }
      }
    }
    return false;
  }

  private boolean matches(ResourceSlice s, Chunk chunk, int count, OwnerReference owner) {
    var spec = s.getSpec();
    List<Device> devices = chunk.devices();
    if (devices == null) {
      if (spec.getDevices() != null && !spec.getDevices().isEmpty()) {
        return false;
      }
      devices = List.of();
      if (!sameCounters(spec.getSharedCounters(), chunk.counters())) {
        return false;
      }
    } else if (spec.getSharedCounters() != null && !spec.getSharedCounters().isEmpty()) {
      return false;
    }
    return nodeName.equals(spec.getNodeName())
        && Long.valueOf(count).equals(spec.getPool().getResourceSliceCount())
        && s.getMetadata().getOwnerReferences() != null
        && s.getMetadata().getOwnerReferences().contains(owner)
        && s.getMetadata().getLabels() != null
        && s.getMetadata().getLabels().entrySet().containsAll(labels.entrySet())
        && sameDevices(spec.getDevices() == null ? List.of() : spec.getDevices(), devices);
  }

  /**
   * Devices equal, with quantities compared by value (the API server may rewrite 1024Mi as 1Gi).
   */
  private static boolean sameCounters(List<CounterSet> a, List<CounterSet> b) {
    List<CounterSet> x = a == null ? List.of() : a;
    List<CounterSet> y = b == null ? List.of() : b;
    if (x.size() != y.size()) {
      return false;
    }
    for (int i = 0; i < x.size(); i++) {
      var cx =
          x.get(i).getCounters() == null
              ? Map.<String, io.fabric8.kubernetes.api.model.resource.v1.Counter>of()
              : x.get(i).getCounters();
      var cy =
          y.get(i).getCounters() == null
              ? Map.<String, io.fabric8.kubernetes.api.model.resource.v1.Counter>of()
              : y.get(i).getCounters();
      if (!Objects.equals(x.get(i).getName(), y.get(i).getName())
          || !cx.keySet().equals(cy.keySet())) {
        return false;
      }
      for (var e : cx.entrySet()) {
        if (!sameQuantity(e.getValue().getValue(), cy.get(e.getKey()).getValue())) {
          return false;
        }
      }
    }
    return true;
  }

  private static boolean sameQuantity(Quantity a, Quantity b) {
    if (a == null || b == null) {
      return a == b;
    }
    return a.getNumericalAmount().compareTo(b.getNumericalAmount()) == 0;
  }

  /** A device as compared: capacities apart, taints without the time the server stamps. */
  private static Device comparable(Device d) {
    DeviceBuilder b = new DeviceBuilder(d).withCapacity(null);
    if (d.getTaints() != null) {
      b.withTaints(
          d.getTaints().stream()
              .map(
                  t ->
                      new io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder(t)
                          .withTimeAdded(null)
                          .build())
              .toList());
    }
    return b.build();
  }

  static boolean sameDevices(List<Device> a, List<Device> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      Device x = a.get(i);
      Device y = b.get(i);
      if (!sameCapacity(x.getCapacity(), y.getCapacity())) {
        return false;
      }
      if (!comparable(x).equals(comparable(y))) {
        return false;
      }
    }
    return true;
  }

  private static boolean sameCapacity(
      Map<String, DeviceCapacity> a, Map<String, DeviceCapacity> b) {
    Map<String, DeviceCapacity> x = a == null ? Map.of() : a;
    Map<String, DeviceCapacity> y = b == null ? Map.of() : b;
    if (!x.keySet().equals(y.keySet())) {
      return false;
    }
    for (var e : x.entrySet()) {
      DeviceCapacity other = y.get(e.getKey());
      if (!Objects.equals(e.getValue().getRequestPolicy(), other.getRequestPolicy())) {
        return false;
      }
      var v1 = e.getValue().getValue();
      var v2 = other.getValue();
      if (v1 == null || v2 == null) {
        if (v1 != v2) {
          return false;
        }
      } else if (v1.getNumericalAmount().compareTo(v2.getNumericalAmount()) != 0) {
        return false;
      }
    }
    return true;
  }

  private void deleteAll() {
    List<ResourceSlice> current = existing();
    for (ResourceSlice s : current) {
      delete(s);
    }
    if (!current.isEmpty()) {
      log.info(
          "deleted the {} ResourceSlices of pool {} of driver {}",
          current.size(),
          nodeName,
          driverName);
    }
  }

  private void delete(ResourceSlice s) {
    String name = s.getMetadata().getName();
    ownDeletes.merge(name, 1, Integer::sum);
    boolean deleted = false;
    try {
      api().withName(name).delete();
      deletes.incrementAndGet();
      deleted = true;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    } finally {
      if (!deleted) {
        ownDeletes.computeIfPresent(name, (n, c) -> c > 1 ? c - 1 : null);
      }
    }
  }

  private void remember(ResourceSlice s) {
    if (s != null && s.getMetadata() != null && s.getMetadata().getResourceVersion() != null) {
      if (ownWrites.size() > 10_000) {
        ownWrites.clear(); // events lost with a broken watch: at worst one needless sync
      }
      ownWrites.add(s.getMetadata().getName() + "@" + s.getMetadata().getResourceVersion());
    }
  }

  /** On the worker: opens the watch on this pool's slices when it is wanted and not open. */
  private void openWatchIfWanted() {
    synchronized (this) {
      if (!watchWanted || closed) {
        return;
      }
      watchWanted = false;
    }
    Watch w;
    try {
      w = api().withLabels(labels).watch(new SliceWatcher());
    } catch (RuntimeException e) {
      synchronized (this) {
        watchWanted = true;
      }
      throw e; // retried with the backoff, like a failed sync
    }
    synchronized (this) {
      if (closed) {
        w.close();
      } else {
        watch = w;
      }
    }
  }

  /** Someone else deleted or changed a slice of the pool: sync again (coalesced). */
  private void repair(String why) {
    synchronized (this) {
      if (closed || !hasDesired || desired == null) {
        return;
      }
      repairs.incrementAndGet();
      log.info("ResourceSlice {}: restoring pool {} of driver {}", why, nodeName, driverName);
      request(desired, true);
    }
  }

  /** Watches this pool's slices; runs on the client's threads. */
  private final class SliceWatcher implements Watcher<ResourceSlice> {
    @Override
    public void eventReceived(Action action, ResourceSlice slice) {
      if (slice == null || slice.getMetadata() == null) {
        return;
      }
      String name = slice.getMetadata().getName();
      String version = slice.getMetadata().getResourceVersion();
      // Judged on the worker, after the sync that may have written this very version remembered
      // it: an event of the publisher's own write is never taken for someone else's.
      try {
        worker.execute(() -> judge(action, name, version));
      } catch (RejectedExecutionException closing) {
        // the publisher is closed
      }
    }

    private void judge(Action action, String name, String version) {
      switch (action) {
        case DELETED -> {
          Integer own = ownDeletes.get(name);
          if (own == null) {
            repair(name + " was deleted by someone else");
          } else if (own > 1) {
            ownDeletes.put(name, own - 1);
          } else {
            ownDeletes.remove(name);
          }
        }
        case ADDED, MODIFIED -> {
          if (!ownWrites.remove(name + "@" + version)) {
            repair(name + " was written by someone else (" + action + ")");
          }
        }
        default -> {
          // ERROR, BOOKMARK: nothing to repair
        }
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      synchronized (ResourceSlicePublisher.this) {
        watch = null;
        if (closed) {
          return;
        }
        log.info(
            "the watch on the ResourceSlices of pool {} of driver {} ended ({}); opening it again",
            nodeName,
            driverName,
            cause.getMessage());
        watchWanted = true;
        if (hasDesired && desired != null) {
          forceSync = true;
        }
        scheduleLocked(jitter(initialBackoff));
      }
    }
  }

  private OwnerReference owner() {
    if (nodeUid == null) {
      Node node = client.nodes().withName(nodeName).get();
      if (node == null) {
        throw new IllegalStateException(
            "node '"
                + nodeName
                + "' does not exist in the API server: pass the name of the node the driver runs"
                + " on (from the downward API, spec.nodeName)");
      }
      nodeUid = node.getMetadata().getUid();
    }
    return new OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind("Node")
        .withName(nodeName)
        .withUid(nodeUid)
        .withController(true)
        .build();
  }

  private static String labelValue(String value) {
    if (value.length() <= 63 && LABEL_VALUE.matcher(value).matches()) {
      return value;
    }
    return "h" + sha256Hex(value).substring(0, 40);
  }

  private static String sha256Hex(String s) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  /**
   * What a publisher has done since it was built.
   *
   * @param creates slices created
   * @param updates slices updated
   * @param deletes slices deleted
   * @param conflicts syncs that met a conflict (409) and were retried
   * @param failures syncs that failed otherwise and were retried
   */
  public record Stats(long creates, long updates, long deletes, long conflicts, long failures) {
    /**
     * Writes of any kind.
     *
     * @return creates, updates and deletes together
     */
    public long writes() {
      return creates + updates + deletes;
    }
  }

  /** Builds a {@link ResourceSlicePublisher}; not thread-safe. */
  public static final class Builder {
    private final KubernetesClient client;
    private final String driverName;
    private final String nodeName;
    private String nodeUid;
    private Duration coalesceDelay = Duration.ofMillis(100);
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(30);
    private Duration resyncInterval = Duration.ofMinutes(10);
    private boolean watchSlices = true;
    private boolean removeOnClose;
    private Duration closeTimeout = Duration.ofSeconds(10);

    private Builder(KubernetesClient client, String driverName, String nodeName) {
      this.client = Objects.requireNonNull(client, "client");
      Objects.requireNonNull(driverName, "driverName");
      Objects.requireNonNull(nodeName, "nodeName");
      if (driverName.length() > 63 || !DNS_SUBDOMAIN.matcher(driverName).matches()) {
        throw new IllegalArgumentException(
            "DRA driver name '"
                + driverName
                + "' is invalid: use a lowercase DNS subdomain of at most 63 characters, e.g."
                + " fpga.example.com");
      }
      if (nodeName.isEmpty()
          || nodeName.length() > MAX_NAME_LENGTH
          || !DNS_SUBDOMAIN.matcher(nodeName).matches()) {
        throw new IllegalArgumentException(
            "node name '"
                + nodeName
                + "' is not a node's name: pass spec.nodeName from the downward API");
      }
      this.driverName = driverName;
      this.nodeName = nodeName;
    }

    /**
     * Sets the Node's UID for the owner reference (default: read from the API server once, which
     * needs {@code get} on nodes).
     *
     * @param uid the node's {@code metadata.uid}
     * @return this builder
     */
    public Builder nodeUid(String uid) {
      this.nodeUid = Objects.requireNonNull(uid, "uid");
      return this;
    }

    /**
     * How long to wait after a change before syncing, so a burst of changes costs one sync (default
     * 100 ms).
     *
     * @param delay zero or more
     * @return this builder
     */
    public Builder coalesceDelay(Duration delay) {
      this.coalesceDelay = nonNegative(delay, "coalesceDelay");
      return this;
    }

    /**
     * The first and the longest wait before retrying a failed sync (default 100 ms and 30 s; the
     * wait doubles after each failure, with jitter).
     *
     * @param initial the first wait
     * @param max the longest wait
     * @return this builder
     */
    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = nonNegative(initial, "initial");
      this.maxBackoff = nonNegative(max, "max");
      if (initial.isZero() || max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "backoff must start above zero and max must be >= initial, was "
                + initial
                + ", "
                + max);
      }
      return this;
    }

    /**
     * How often the pool is read back and repaired if someone else changed it (default 10 minutes;
     * zero turns it off).
     *
     * @param interval the interval
     * @return this builder
     */
    public Builder resyncInterval(Duration interval) {
      this.resyncInterval = nonNegative(interval, "resyncInterval");
      return this;
    }

    /**
     * Whether the publisher watches its own slices and restores them when someone else deletes or
     * changes them (default true: the kubelet deletes a node's slices when it starts). Without the
     * watch, only the periodic resync repairs them.
     *
     * @param value false to rely on the periodic resync alone
     * @return this builder
     */
    public Builder watchSlices(boolean value) {
      this.watchSlices = value;
      return this;
    }

    /**
     * Whether {@link ResourceSlicePublisher#close()} deletes the pool's slices (default false: a
     * restarting driver keeps its devices visible; turn it on for an uninstall).
     *
     * @param value true to delete on close
     * @return this builder
     */
    public Builder removeOnClose(boolean value) {
      this.removeOnClose = value;
      return this;
    }

    /**
     * The longest {@link ResourceSlicePublisher#close()} waits for the slices to be deleted
     * (default 10 s).
     *
     * @param timeout the timeout
     * @return this builder
     */
    public Builder closeTimeout(Duration timeout) {
      this.closeTimeout = nonNegative(timeout, "closeTimeout");
      return this;
    }

    /**
     * Builds the publisher; nothing is written before the first {@link #publish(List)}.
     *
     * @return the publisher, with its worker thread started
     */
    public ResourceSlicePublisher build() {
      return new ResourceSlicePublisher(this);
    }

    private static Duration nonNegative(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative()) {
        throw new IllegalArgumentException(name + " must not be negative, was " + d);
      }
      return d;
    }
  }
}
