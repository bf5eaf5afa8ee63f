package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.podresources.v1.AllocatableResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.ContainerDevices;
import io.github.deviceplugin4j.api.podresources.v1.ContainerResources;
import io.github.deviceplugin4j.api.podresources.v1.NUMANode;
import io.github.deviceplugin4j.api.podresources.v1.PodResources;
import io.github.deviceplugin4j.api.podresources.v1.TopologyInfo;
import io.github.deviceplugin4j.testkit.AllocationFlow.PodRecord;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.PodResourcesService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The fake kubelet's allocations and devices as the PodResources API shows them: pods from the
 * {@link AllocationFlow} (copied first), devices and their NUMA nodes from the {@link
 * DeviceManagerModel}.
 */
final class PodResourcesView implements PodResourcesService.Source {
  private final DeviceManagerModel model;
  private final AllocationFlow allocations;
  private final EventJournal journal;

  PodResourcesView(DeviceManagerModel model, AllocationFlow allocations, EventJournal journal) {
    this.model = model;
    this.allocations = allocations;
    this.journal = journal;
  }

  @Override
  public List<PodResources> list() {
    List<PodRecord> pods = allocations.pods();
    return model.locked(
        () -> {
          List<PodResources> out = new ArrayList<>();
          for (PodRecord p : pods) {
            out.add(podResourcesLocked(p));
          }
          return out;
        });
  }

  @Override
  public Optional<PodResources> get(String namespace, String name) {
    List<PodRecord> pods = allocations.pods();
    return model.locked(
        () -> {
          for (PodRecord p : pods) {
            if (p.namespace.equals(namespace) && p.name.equals(name)) {
              return Optional.of(podResourcesLocked(p));
            }
          }
          return Optional.<PodResources>empty();
        });
  }

  @Override
  public AllocatableResourcesResponse allocatable() {
    model.lock.lock();
    try {
      AllocatableResourcesResponse.Builder b = AllocatableResourcesResponse.newBuilder();
      for (ResourceState rs : model.resourceStates()) {
        for (DeviceState d : rs.devices) {
          if (d.healthy()) {
            b.addAllDevices(containerDevices(rs.name, d.id(), d.numaNodes()));
          }
        }
      }
      return b.build();
    } finally {
      model.lock.unlock();
    }
  }

  @Override
  public void event(String detail, boolean ok) {
    journal.record(Kind.POD_RESOURCES, "", ok ? Outcome.OK : Outcome.FAILED, detail);
  }

  private PodResources podResourcesLocked(PodRecord p) {
    Map<String, ContainerResources.Builder> containers = new LinkedHashMap<>();
    for (Allocation a : p.allocations.values()) {
      ContainerResources.Builder c =
          containers.computeIfAbsent(
              a.containerName(), n -> ContainerResources.newBuilder().setName(n));
      ResourceState rs = model.resource(a.resourceName());
      for (String id : a.deviceIds()) {
        List<Long> numa = List.of();
        if (rs != null) {
          numa =
              rs.devices.stream()
                  .filter(d -> d.id().equals(id))
                  .findFirst()
                  .map(DeviceState::numaNodes)
                  .orElse(List.of());
        }
        c.addAllDevices(containerDevices(a.resourceName(), id, numa));
      }
    }
    PodResources.Builder b = PodResources.newBuilder().setName(p.name).setNamespace(p.namespace);
    containers.values().forEach(b::addContainers);
    return b.build();
  }

  /** Like the kubelet: one entry per device and NUMA node (one without topology if it has none). */
  private static List<ContainerDevices> containerDevices(
      String resource, String id, List<Long> numa) {
    if (numa.isEmpty()) {
      return List.of(
          ContainerDevices.newBuilder().setResourceName(resource).addDeviceIds(id).build());
    }
    List<ContainerDevices> out = new ArrayList<>();
    for (long n : numa) {
      out.add(
          ContainerDevices.newBuilder()
              .setResourceName(resource)
              .addDeviceIds(id)
              .setTopology(TopologyInfo.newBuilder().addNodes(NUMANode.newBuilder().setID(n)))
              .build());
    }
    return out;
  }
}
