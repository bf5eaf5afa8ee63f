package io.github.deviceplugin4j.core.internal.state;

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
      long sequence,
      List<Device> physical,
      Sharing sharing,
      List<? extends DeviceListEncoder> adapters) {
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
    for (DeviceListEncoder a : adapters) {
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

  /** A snapshot of validated devices (IDs unique), not shared. */
  public static Snapshot of(
      long sequence, List<Device> devices, List<? extends DeviceListEncoder> adapters) {
    return new Snapshot(sequence, devices, Sharing.none(), adapters);
  }

  /**
   * A snapshot of validated physical devices (IDs unique, replica IDs within the kubelet's limit),
   * advertised as their replicas when shared.
   */
  public static Snapshot of(
      long sequence,
      List<Device> physical,
      Sharing sharing,
      List<? extends DeviceListEncoder> adapters) {
    return new Snapshot(sequence, physical, sharing, adapters);
  }

  /**
   * The devices the backend published (validated), in publication order; the same as {@link
   * #devices()} unless shared.
   */
  public List<Device> physical() {
    return physical;
  }

  /**
   * The physical device an ID the kubelet sent stands for (the device itself when not shared); null
   * when unknown.
   */
  public Device physicalOf(String id) {
    return physicalOf == null ? byId.get(id) : physicalOf.get(id);
  }

  /** Increasing number of this snapshot. */
  public long sequence() {
    return sequence;
  }

  /** The devices the kubelet sees (replicas when shared), in publication order. */
  public List<Device> devices() {
    return devices;
  }

  /** The devices by ID, unmodifiable. */
  public Map<String, Device> byId() {
    return byId;
  }

  /** Number of healthy devices. */
  public int healthy() {
    return healthy;
  }

  /** The unhealthy devices' reasons (empty when none given) by ID, in list order. */
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

  /** The ListAndWatch message of an API version. */
  public Object wire(DeviceListEncoder adapter) {
    return wire.get(adapter.serviceName());
  }

  /** The encoded size of an API version's ListAndWatch message, in bytes without gRPC framing. */
  public int encodedSize(DeviceListEncoder adapter) {
    return sizes.getOrDefault(adapter.serviceName(), 0);
  }

  /** The largest encoded size over every API version, in bytes. */
  public int maxEncodedSize() {
    return maxEncodedSize;
  }

  /**
   * Whether the kubelet would see the same list (IDs, health, topology; order ignored); false for
   * null.
   */
  public boolean sameWire(Snapshot other) {
    return other != null && wireView.equals(other.wireView);
  }
}
