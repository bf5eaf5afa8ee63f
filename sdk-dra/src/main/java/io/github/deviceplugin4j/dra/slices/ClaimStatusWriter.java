package io.github.deviceplugin4j.dra.slices;

import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes this driver's entries of claims' {@code status.devices} (KEP-4817, {@code
 * DRAResourceClaimDeviceStatus}, GA in Kubernetes 1.37): conditions, opaque data and network data
 * (interface name, IP addresses, hardware address) of the devices it prepared.
 *
 * <p>Each call sets the wanted entry of one device (and share) of one claim; the writer reads the
 * claim, replaces its own entry and keeps every other entry (other drivers', other devices'), and
 * updates the claim's status subresource with the resource version it read. Entries are checked
 * with {@link SliceValidation#deviceStatus} first. A failed write (a conflict, the API server away)
 * is retried with exponential backoff, on the writer's own thread, until it lands; entries set
 * meanwhile are coalesced into the next write, the latest per device winning. A claim that is gone,
 * or was re-created with another UID, is dropped with a log line, and so is an entry for a device
 * the claim is not allocated (the API server would refuse it) or a write the API server refuses as
 * invalid (422): those cannot succeed by retrying.
 *
 * <pre>{@code
 * try (ClaimStatusWriter status = ClaimStatusWriter.builder(client, "nic.example.com", nodeName).build()) {
 *   status.set(new ClaimStatusWriter.ClaimRef("team-a", "nic", uid),
 *       new AllocatedDeviceStatusBuilder()
 *           .withDevice("vf-0")
 *           .withNewNetworkData().withInterfaceName("eth1").withHardwareAddress("aa:bb:cc:dd:ee:ff").endNetworkData()
 *           .build());
 * }
 * }</pre>
 *
 * <p>Needs {@code get} on {@code resourceclaims} and {@code update} (or {@code patch}) on {@code
 * resourceclaims/status}.
 */
public final class ClaimStatusWriter implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ClaimStatusWriter.class);

  private final KubernetesClient client;
  private final String driverName;
  private final String poolName;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final ScheduledExecutorService worker;

  // Guarded by this.
  private final Map<ClaimRef, Map<String, AllocatedDeviceStatus>> wanted = new LinkedHashMap<>();
  private final Map<ClaimRef, List<CompletableFuture<Void>>> waiting = new HashMap<>();
  private boolean scheduled;
  private boolean closed;

  // Only on the worker.
  private Duration backoff;

  /**
   * A claim as the kubelet names it.
   *
   * @param namespace the claim's namespace
   * @param name the claim's name
   * @param uid the claim's UID; a claim with another UID is not written
   */
  public record ClaimRef(String namespace, String name, String uid) {
    /**
     * Checks for nulls.
     *
     * @param namespace the namespace
     * @param name the name
     * @param uid the UID
     */
    public ClaimRef {
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(uid, "uid");
    }
  }

  private ClaimStatusWriter(Builder b) {
    this.client = b.client;
    this.driverName = b.driverName;
    this.poolName = b.poolName;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.backoff = b.initialBackoff;
    this.worker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "dra-claim-status-" + driverName);
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * A builder for the writer of one driver's entries on one node's pool.
   *
   * @param client the Kubernetes client; not closed by the writer
   * @param driverName the driver
   * @param poolName the pool (the node's name)
   * @return the builder
   */
  public static Builder builder(KubernetesClient client, String driverName, String poolName) {
    return new Builder(client, driverName, poolName);
  }

  /**
   * Sets the status of one allocated device of a claim; driver and pool are filled in.
   *
   * @param claim the claim
   * @param status the entry: {@code device} (and {@code shareID} for a shared device) name it
   * @return completes once this entry, or a newer one for the same device, is in the API server;
   *     fails when the claim is gone
   * @throws IllegalArgumentException when the API server would refuse the entry (naming why)
   * @throws IllegalStateException when the writer is closed
   */
  public CompletableFuture<Void> set(ClaimRef claim, AllocatedDeviceStatus status) {
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(status, "status");
    AllocatedDeviceStatus entry =
        new AllocatedDeviceStatusBuilder(status).withDriver(driverName).withPool(poolName).build();
    List<String> problems = SliceValidation.deviceStatus(entry);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "claim " + claim.namespace() + "/" + claim.name() + ": " + String.join("; ", problems));
    }
    CompletableFuture<Void> future = new CompletableFuture<>();
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("the claim status writer is closed");
      }
      wanted
          .computeIfAbsent(claim, c -> new LinkedHashMap<>())
          .put(key(entry.getDevice(), entry.getShareID()), entry);
      waiting.computeIfAbsent(claim, c -> new ArrayList<>()).add(future);
      schedule(Duration.ZERO);
    }
    return future;
  }

  private static String key(String device, String shareId) {
    return device + "/" + (shareId == null ? "" : shareId);
  }

  private void schedule(Duration delay) {
    if (!scheduled && !closed) {
      scheduled = true;
      worker.schedule(this::run, delay.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private void run() {
    Map<ClaimRef, Map<String, AllocatedDeviceStatus>> batch;
    Map<ClaimRef, List<CompletableFuture<Void>>> futures;
    synchronized (this) {
      scheduled = false;
      if (closed) {
        return;
      }
      batch = new LinkedHashMap<>(wanted);
      futures = new HashMap<>(waiting);
      wanted.clear();
      waiting.clear();
    }
    Map<ClaimRef, Map<String, AllocatedDeviceStatus>> failed = new LinkedHashMap<>();
    Map<ClaimRef, List<CompletableFuture<Void>>> failedFutures = new HashMap<>();
    for (var e : batch.entrySet()) {
      ClaimRef ref = e.getKey();
      List<CompletableFuture<Void>> fs = futures.getOrDefault(ref, List.of());
      try {
        String gone = write(ref, e.getValue());
        if (gone == null) {
          fs.forEach(f -> f.complete(null));
        } else {
          log.info("driver {}: not writing the device status of {}: {}", driverName, ref, gone);
          fs.forEach(f -> f.completeExceptionally(new IllegalStateException(gone)));
        }
      } catch (RuntimeException ex) {
        log.warn(
            "driver {}: could not write the device status of claim {}/{}; retrying: {}",
            driverName,
            ref.namespace(),
            ref.name(),
            ex.toString());
        failed.put(ref, e.getValue());
        failedFutures.put(ref, fs);
      }
    }
    synchronized (this) {
      if (failed.isEmpty()) {
        backoff = initialBackoff;
      } else {
        // Older wishes first, so a newer set() for the same device wins.
        for (var e : failed.entrySet()) {
          Map<String, AllocatedDeviceStatus> merged = new LinkedHashMap<>(e.getValue());
          Map<String, AllocatedDeviceStatus> newer = wanted.remove(e.getKey());
          if (newer != null) {
            merged.putAll(newer);
          }
          wanted.put(e.getKey(), merged);
          List<CompletableFuture<Void>> fs = new ArrayList<>(failedFutures.get(e.getKey()));
          List<CompletableFuture<Void>> newerFutures = waiting.remove(e.getKey());
          if (newerFutures != null) {
            fs.addAll(newerFutures);
          }
          waiting.put(e.getKey(), fs);
        }
        long nanos = backoff.toNanos();
        Duration wait =
            Duration.ofNanos(nanos + ThreadLocalRandom.current().nextLong(nanos / 4 + 1));
        Duration doubled = backoff.multipliedBy(2);
        backoff = doubled.compareTo(maxBackoff) > 0 ? maxBackoff : doubled;
        schedule(wait);
        return;
      }
      if (!wanted.isEmpty()) {
        schedule(Duration.ZERO);
      }
    }
  }

  /** Writes one claim's entries; returns why the claim cannot be written, or null when written. */
  private String write(ClaimRef ref, Map<String, AllocatedDeviceStatus> entries) {
    var api = client.dynamicResourceAllocation().v1().resourceClaims().inNamespace(ref.namespace());
    ResourceClaim claim = api.withName(ref.name()).get();
    if (claim == null) {
      return "the claim is gone";
    }
    if (!ref.uid().equals(claim.getMetadata().getUid())) {
      return "the claim was re-created (uid " + claim.getMetadata().getUid() + ")";
    }
    if (claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
      return "the claim is no longer allocated";
    }
    // The API server refuses an entry for a device the claim was not allocated (validation.go,
    // validateDeviceStatus): such an entry is dropped here, naming it, instead of being retried.
    java.util.Set<String> allocated = new java.util.HashSet<>();
    var results =
        claim.getStatus().getAllocation().getDevices() == null
            ? null
            : claim.getStatus().getAllocation().getDevices().getResults();
    if (results != null) {
      for (var r : results) {
        if (driverName.equals(r.getDriver()) && poolName.equals(r.getPool())) {
          allocated.add(key(r.getDevice(), r.getShareID()));
        }
      }
    }
    List<String> dropped = new ArrayList<>();
    Map<String, AllocatedDeviceStatus> left = new LinkedHashMap<>();
    entries.forEach(
        (k, v) -> {
          if (allocated.contains(k)) {
            left.put(k, v);
          } else {
            dropped.add(k);
          }
        });
    if (!dropped.isEmpty()) {
      log.error(
          "driver {}: the status of {} is not written to claim {}/{}: the claim is not allocated"
              + " those devices of pool {} (device/shareID)",
          driverName,
          dropped,
          ref.namespace(),
          ref.name(),
          poolName);
      if (left.isEmpty()) {
        return "the claim is not allocated device(s) " + dropped + " of pool " + poolName;
      }
    }
    List<AllocatedDeviceStatus> devices = new ArrayList<>();
    if (claim.getStatus().getDevices() != null) {
      for (AllocatedDeviceStatus d : claim.getStatus().getDevices()) {
        boolean ours = driverName.equals(d.getDriver()) && poolName.equals(d.getPool());
        AllocatedDeviceStatus replacement =
            ours ? left.remove(key(d.getDevice(), d.getShareID())) : null;
        devices.add(replacement != null ? replacement : d);
      }
    }
    devices.addAll(left.values());
    claim.getStatus().setDevices(devices);
    try {
      api.resource(claim).updateStatus();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return "the claim is gone";
      }
      if (e.getCode() == 422) {
        // Refused as invalid: retrying the same entries cannot succeed.
        return "the API server refused the status as invalid: "
            + (e.getStatus() != null ? e.getStatus().getMessage() : e.getMessage());
      }
      throw e;
    }
    return null;
  }

  /** Stops writing; entries not yet written are dropped and their futures fail. */
  @Override
  public void close() {
    List<CompletableFuture<Void>> left = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      waiting.values().forEach(left::addAll);
      waiting.clear();
      wanted.clear();
    }
    worker.shutdownNow();
    left.forEach(
        f ->
            f.completeExceptionally(
                new IllegalStateException("the claim status writer was closed")));
  }

  /** Builds a {@link ClaimStatusWriter}; not thread-safe. */
  public static final class Builder {
    private final KubernetesClient client;
    private final String driverName;
    private final String poolName;
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(30);

    private Builder(KubernetesClient client, String driverName, String poolName) {
      this.client = Objects.requireNonNull(client, "client");
      this.driverName = Objects.requireNonNull(driverName, "driverName");
      this.poolName = Objects.requireNonNull(poolName, "poolName");
    }

    /**
     * The first and the longest wait before retrying a failed write (default 100 ms and 30 s).
     *
     * @param initial the first wait, above zero
     * @param max the longest wait, at least {@code initial}
     * @return this builder
     */
    public Builder backoff(Duration initial, Duration max) {
      if (initial.isZero() || initial.isNegative() || max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "backoff must start above zero and max must be >= initial, was "
                + initial
                + ", "
                + max);
      }
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /**
     * Builds the writer.
     *
     * @return the writer, with its thread started
     */
    public ClaimStatusWriter build() {
      return new ClaimStatusWriter(this);
    }
  }
}
