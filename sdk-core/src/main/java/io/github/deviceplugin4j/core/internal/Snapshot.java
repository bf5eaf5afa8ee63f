package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.Sharing;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One validated device list as the kubelet sees it, with its wire messages encoded once for every
 * API version and their size computed once. With {@link Sharing}, the kubelet sees replicas: the
 * snapshot keeps the physical devices they stand for.
 */
public final class Snapshot {

  /** What the kubelet sees of a device. */
  private record WireView(Health health, List<Integer> numaNodes) {}

  private final long sequence;
  private final List<Device> physical;
  private final Map<String, Device> physicalOf;
  private final List<Device> devices;
  private final Map<String, Device> byId;
  private final Map<String, WireView> wireView;
  private final Map<String, Object> wire;
  private final Map<String, Integer> sizes;
  private final int maxEncodedSize;
  private final int healthy;

  private Snapshot(
      long sequence, List<Device> physical, Sharing sharing, List<ApiAdapter> adapters) {
    this.sequence = sequence;
    this.physical = List.copyOf(physical);
    if (sharing.isShared()) {
      List<Device> replicas = new ArrayList<>(this.physical.size() * sharing.replicas());
      Map<String, Device> of = new HashMap<>();
      for (Device d : this.physical) {
        for (int k = 0; k < sharing.replicas(); k++) {
          Device r =
              new Device(
                  Sharing.replicaId(d.id(), k),
                  d.health(),
                  d.numaNodes(),
                  d.allocation(),
                  d.unhealthyReason());
          replicas.add(r);
          of.put(r.id(), d);
        }
      }
      this.devices = List.copyOf(replicas);
      this.physicalOf = of;
    } else {
      this.devices = this.physical;
      this.physicalOf = null;
    }
    Map<String, Device> ids = new LinkedHashMap<>();
    Map<String, WireView> view = new HashMap<>();
    int h = 0;
    for (Device d : this.devices) {
      ids.put(d.id(), d);
      view.put(d.id(), new WireView(d.health(), d.numaNodes()));
      if (d.isHealthy()) {
        h++;
      }
    }
    this.byId = java.util.Collections.unmodifiableMap(ids);
    this.wireView = view;
    this.healthy = h;
    Map<String, Object> messages = new HashMap<>();
    Map<String, Integer> bytes = new HashMap<>();
    int max = 0;
    for (ApiAdapter a : adapters) {
      if (!messages.containsKey(a.serviceName())) {
        Object message = a.encodeDevices(this.devices);
        messages.put(a.serviceName(), message);
        int size = a.encodedSize(message);
        bytes.put(a.serviceName(), size);
        max = Math.max(max, size);
      }
    }
    this.wire = messages;
    this.sizes = bytes;
    this.maxEncodedSize = max;
  }

  /**
   * Builds a snapshot of validated devices.
   *
   * @param sequence increasing number
   * @param devices validated devices, IDs unique
   * @param adapters every API version served
   * @return the snapshot
   */
  public static Snapshot of(long sequence, List<Device> devices, List<ApiAdapter> adapters) {
    return new Snapshot(sequence, devices, Sharing.none(), adapters);
  }

  /**
   * Builds a snapshot of validated physical devices, advertised as their replicas when shared.
   *
   * @param sequence increasing number
   * @param physical validated devices, IDs unique, replica IDs within the kubelet's limit
   * @param sharing how the devices are shared
   * @param adapters every API version served
   * @return the snapshot
   */
  public static Snapshot of(
      long sequence, List<Device> physical, Sharing sharing, List<ApiAdapter> adapters) {
    return new Snapshot(sequence, physical, sharing, adapters);
  }

  /**
   * The devices the backend published (validated), in publication order; the same as {@link
   * #devices()} unless shared.
   *
   * @return the physical devices
   */
  public List<Device> physical() {
    return physical;
  }

  /**
   * The physical device an advertised device stands for.
   *
   * @param id an ID the kubelet sent
   * @return the physical device (the device itself when not shared), or null when unknown
   */
  public Device physicalOf(String id) {
    return physicalOf == null ? byId.get(id) : physicalOf.get(id);
  }

  /**
   * Increasing number of this snapshot.
   *
   * @return the sequence number
   */
  public long sequence() {
    return sequence;
  }

  /**
   * The devices the kubelet sees (replicas when shared), in publication order.
   *
   * @return devices
   */
  public List<Device> devices() {
    return devices;
  }

  /**
   * The devices by ID.
   *
   * @return unmodifiable map
   */
  public Map<String, Device> byId() {
    return byId;
  }

  /**
   * Number of healthy devices.
   *
   * @return count
   */
  public int healthy() {
    return healthy;
  }

  /**
   * The unhealthy devices with their reasons.
   *
   * @return ID to reason (empty when none given), in list order
   */
  public Map<String, String> unhealthyReasons() {
    if (healthy == devices.size()) {
      return Map.of();
    }
    Map<String, String> reasons = new LinkedHashMap<>();
    for (Device d : devices) {
      if (!d.isHealthy()) {
        reasons.put(d.id(), d.unhealthyReason());
      }
    }
    return reasons;
  }

  /**
   * The ListAndWatch message of an API version.
   *
   * @param adapter the version
   * @return its message
   */
  public Object wire(ApiAdapter adapter) {
    return wire.get(adapter.serviceName());
  }

  /**
   * The encoded size of an API version's ListAndWatch message.
   *
   * @param adapter the version
   * @return bytes, without gRPC framing
   */
  public int encodedSize(ApiAdapter adapter) {
    Integer size = sizes.get(adapter.serviceName());
    return size == null ? 0 : size;
  }

  /**
   * The largest encoded size over every API version.
   *
   * @return bytes
   */
  public int maxEncodedSize() {
    return maxEncodedSize;
  }

  /**
   * Whether the kubelet would see the same list (IDs, health, topology; order ignored).
   *
   * @param other another snapshot, may be null
   * @return true when nothing the kubelet sees differs
   */
  public boolean sameWire(Snapshot other) {
    return other != null && wireView.equals(other.wireView);
  }
}
