package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.podresources.v1.AllocatableResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.CDIDevice;
import io.github.deviceplugin4j.api.podresources.v1.ClaimResource;
import io.github.deviceplugin4j.api.podresources.v1.ContainerDevices;
import io.github.deviceplugin4j.api.podresources.v1.ContainerResources;
import io.github.deviceplugin4j.api.podresources.v1.DynamicResource;
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
 * DeviceManagerModel}, and each running DRA pod's containers with the devices of the prepared
 * claims they use ({@link DraPluginManager#runningPods()}), merged by pod and container name.
 *
 * <p>Dynamic resources are built like the kubelet's {@code GetDynamicResources} ({@code
 * pkg/kubelet/cm/container_manager_linux.go}, from {@code GetContainerClaimInfos} in {@code
 * pkg/kubelet/cm/dra/manager.go}): one entry per claim the container uses, with every device of the
 * claim (requests are not looked at), each with its driver, pool, device and CDI IDs. Like that
 * code, the CDI IDs of a driver's devices accumulate: the n-th device of a claim lists the CDI IDs
 * of the devices before it too (the list is declared outside the loop over devices).
 */
final class PodResourcesView implements PodResourcesService.Source {
  private final DeviceManagerModel model;
  private final AllocationFlow allocations;
  private final DraPluginManager dra;
  private final EventJournal journal;

  PodResourcesView(
      DeviceManagerModel model,
      AllocationFlow allocations,
      DraPluginManager dra,
      EventJournal journal) {
    this.model = model;
    this.allocations = allocations;
    this.dra = dra;
    this.journal = journal;
  }

  @Override
  public List<PodResources> list() {
    List<PodRecord> pods = allocations.pods();
    List<DraRunningPods.PodClaims> draPods = dra.runningPods();
    return model.locked(
        () -> {
          Map<String, PodResources.Builder> out = new LinkedHashMap<>();
          for (PodRecord p : pods) {
            out.put(p.namespace + "/" + p.name, podResourcesLocked(p).toBuilder());
          }
          for (DraRunningPods.PodClaims p : draPods) {
            PodResources.Builder b =
                out.computeIfAbsent(
                    p.pod().namespace() + "/" + p.pod().name(),
                    k ->
                        PodResources.newBuilder()
                            .setName(p.pod().name())
                            .setNamespace(p.pod().namespace()));
            addDynamicResources(b, p);
          }
          return out.values().stream().map(PodResources.Builder::build).toList();
        });
  }

  @Override
  public Optional<PodResources> get(String namespace, String name) {
    return list().stream()
        .filter(p -> p.getNamespace().equals(namespace) && p.getName().equals(name))
        .findFirst();
  }

  private static void addDynamicResources(PodResources.Builder pod, DraRunningPods.PodClaims p) {
    for (Map.Entry<String, List<DraPreparedClaim>> c : p.containers().entrySet()) {
      ContainerResources.Builder container = null;
      for (ContainerResources.Builder existing : pod.getContainersBuilderList()) {
        if (existing.getName().equals(c.getKey())) {
          container = existing;
        }
      }
      if (container == null) {
        container = pod.addContainersBuilder().setName(c.getKey());
      }
      for (DraPreparedClaim claim : c.getValue()) {
        DynamicResource.Builder d =
            DynamicResource.newBuilder()
                .setClaimName(claim.claim().name())
                .setClaimNamespace(claim.claim().namespace());
        List<CDIDevice> cdi = new ArrayList<>(); // per driver, outside the device loop
        for (DraDevice device : claim.devices()) {
          for (String id : device.cdiDeviceIds()) {
            cdi.add(CDIDevice.newBuilder().setName(id).build());
          }
          d.addClaimResources(
              ClaimResource.newBuilder()
                  .addAllCdiDevices(cdi)
                  .setDriverName(claim.driver())
                  .setPoolName(device.poolName())
                  .setDeviceName(device.deviceName()));
        }
        container.addDynamicResources(d);
      }
    }
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
