package io.github.deviceplugin4j.testkit;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** One resource as the device manager knows it. Guarded by the model's lock. */
final class ResourceState {
  final String name;
  // The current endpoint (PluginConnected), possibly stopped.
  Endpoint endpoint;
  // The kubelet's clients for the name: the newest only up to v1.36, one per socket after.
  final List<Endpoint> clients = new ArrayList<>();
  // Every connection the kubelet still holds for the resource, current or superseded.
  final List<Endpoint> open = new ArrayList<>();
  List<DeviceState> devices = List.of();
  // A device list was received since the resource became known (a checkpoint keeps it): the
  // kubelet's healthyDevices has the name, so isDevicePluginResource holds for it.
  boolean listed;
  long largestListBytes;
  Runnable removal;

  ResourceState(String name) {
    this.name = name;
  }

  /** Allocatable as the kubelet reports it: distinct healthy IDs (allocated ones included). */
  int allocatable() {
    return allocatableOf(devices);
  }

  /** Capacity as the kubelet reports it. */
  int capacity() {
    return capacityOf(devices);
  }

  /**
   * Capacity as the kubelet reports it: healthy and unhealthy IDs are two sets, so a repeated ID
   * counts once per set.
   */
  static int capacityOf(List<DeviceState> list) {
    Set<String> healthy = new HashSet<>();
    Set<String> unhealthy = new HashSet<>();
    for (DeviceState d : list) {
      (d.healthy() ? healthy : unhealthy).add(d.id());
    }
    return healthy.size() + unhealthy.size();
  }

  /** Allocatable as the kubelet reports it: distinct healthy IDs (allocated ones included). */
  static int allocatableOf(List<DeviceState> list) {
    Set<String> healthy = new HashSet<>();
    for (DeviceState d : list) {
      if (d.healthy()) {
        healthy.add(d.id());
      }
    }
    return healthy.size();
  }
}
