package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.CDIDevice;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerPreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.Mount;
import io.github.deviceplugin4j.api.v1beta1.PreStartContainerRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationRequest;
import io.github.deviceplugin4j.api.v1beta1.PreferredAllocationResponse;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.GoErrors;
import io.github.deviceplugin4j.testkit.internal.ResourceNames;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The kubelet's device allocation for one container: device choice, {@code GetPreferredAllocation}
 * (checked), {@code Allocate}, {@code PreStartContainer}, container restarts and releases. It owns
 * the pods and their allocations, guarded by the model's (the journal's) lock; devices and
 * endpoints are read from the {@link DeviceManagerModel} under the same lock, RPCs run outside it.
 * Allocations and container restarts run one at a time, as in the kubelet.
 */
final class AllocationFlow {
  private final DeviceManagerModel model;
  private final EventJournal journal;
  private final PluginConnector connector;
  private final boolean strictPreferredAllocation;
  // Guarded by serial.
  private final Random random;
  private final ReentrantLock serial = new ReentrantLock();
  // Guarded by model.lock.
  private final Map<String, PodRecord> pods = new LinkedHashMap<>();

  AllocationFlow(
      DeviceManagerModel model,
      EventJournal journal,
      PluginConnector connector,
      boolean strictPreferredAllocation,
      Random random) {
    this.model = model;
    this.journal = journal;
    this.connector = connector;
    this.strictPreferredAllocation = strictPreferredAllocation;
    this.random = random;
  }

  private <T> T serially(Supplier<T> body) {
    serial.lock();
    try {
      return body.get();
    } finally {
      serial.unlock();
    }
  }

  Allocation allocate(PodRequest req) {
    return serially(() -> allocateNow(req));
  }

  private Allocation allocateNow(PodRequest req) {
    String resource = req.resourceName();
    Endpoint ep;
    List<String> available = new ArrayList<>();
    model.lock.lock();
    try {
      model.checkOpen();
      PodRecord pod = pods.get(req.podUid());
      Allocation existing =
          pod == null ? null : pod.allocations.get(key(req.containerName(), resource));
      if (existing != null) {
        if (existing.deviceIds().size() != req.count()) {
          throw refuse(
              resource,
              "pod "
                  + ResourceNames.goQuote(req.podUid())
                  + " container "
                  + ResourceNames.goQuote(req.containerName())
                  + " changed request for resource "
                  + ResourceNames.goQuote(resource)
                  + " from "
                  + existing.deviceIds().size()
                  + " to "
                  + req.count());
        }
        journal.record(
            Kind.ALLOCATE,
            resource,
            Outcome.INFO,
            "container already holds " + existing.deviceIds() + "; nothing to do");
        return existing;
      }
      ResourceState rs = model.resource(resource);
      if (rs == null || (!rs.listed && req.deviceIds().isEmpty())) {
        // allocateContainerResources (pkg/kubelet/cm/devicemanager/manager.go) skips a resource
        // for which isDevicePluginResource is false: no device list (healthyDevices has no entry:
        // never registered, no list yet, its list refused over 4 MiB, or removed after the grace
        // period) and no devices of it allocated. The container is admitted with no devices and
        // no plugin is called. With devices of it still allocated, devicesToAllocate refuses.
        // Explicit IDs (a fake-only request, sent as given to test a plugin's validation) still
        // go to a connected plugin that has sent no list yet.
        if (!allocatedIdsLocked(resource).isEmpty()) {
          throw refuse(resource, "cannot allocate unregistered device " + resource);
        }
        journal.record(
            Kind.ALLOCATE,
            resource,
            Outcome.INFO,
            describe(req)
                + ": admitted with no devices: the kubelet has no device list for "
                + resource
                + ", so it is not a device plugin resource there and no plugin is called");
        return new Allocation(
            resource,
            req.podUid(),
            req.containerName(),
            List.of(),
            Map.of(),
            List.of(),
            List.of(),
            Map.of(),
            List.of());
      }
      ep = rs.endpoint;
      if (req.deviceIds().isEmpty()) {
        Set<String> allocated = allocatedIdsLocked(resource);
        int healthy = 0;
        for (DeviceState d : rs.devices) {
          if (d.healthy()) {
            healthy++;
            if (!allocated.contains(d.id()) && !req.mustInclude().contains(d.id())) {
              available.add(d.id());
            }
          }
        }
        if (healthy == 0 || ep == null) {
          throw refuse(
              resource,
              "no healthy devices present; cannot allocate unhealthy devices " + resource);
        }
        int needed = req.count() - req.mustInclude().size();
        if (available.size() < needed) {
          throw refuse(
              resource,
              "requested number of devices unavailable for "
                  + resource
                  + ". Requested: "
                  + needed
                  + ", Available: "
                  + available.size());
        }
      } else if (ep == null) {
        throw refuse(resource, "the plugin for " + resource + " is not connected");
      }
      if (ep.stopped) {
        // The kubelet's endpoint refuses every call once it has a stop time.
        boolean preferredFirst =
            req.deviceIds().isEmpty() && !ep.fromCheckpoint && ep.preferredAllocationAvailable;
        throw stopped(
            resource,
            ep,
            preferredFirst ? "device plugin GetPreferredAllocation rpc failed with err: " : "",
            true);
      }
    } finally {
      model.lock.unlock();
    }

    List<String> chosen;
    if (!req.deviceIds().isEmpty()) {
      chosen = req.deviceIds();
    } else if (ep.preferredAllocationAvailable) {
      chosen = preferredAllocation(ep, req, available);
    } else {
      chosen = new ArrayList<>(req.mustInclude());
      chosen.addAll(available.subList(0, req.count() - req.mustInclude().size()));
    }

    AllocateResponse resp;
    try {
      resp =
          connector
              .withTimeout(DevicePluginGrpc.newBlockingStub(PluginConnector.channel(ep)))
              .allocate(
                  AllocateRequest.newBuilder()
                      .addContainerRequests(
                          ContainerAllocateRequest.newBuilder().addAllDevicesIds(chosen))
                      .build());
    } catch (StatusRuntimeException e) {
      journal.record(
          Kind.ALLOCATE,
          resource,
          Outcome.FAILED,
          chosen + ": " + PluginConnector.describe(e.getStatus()));
      // The endpoint's allocate returns the gRPC error as it is (endpoint.go).
      throw rpcFailed("Allocate", e, GoErrors.admissionFailure(GoErrors.rpcError(e.getStatus())));
    }
    if (resp.getContainerResponsesCount() == 0) {
      String description =
          "no containers return in allocation response (container_responses is empty; the"
              + " kubelet sent one container request and needs exactly one response)";
      journal.record(Kind.ALLOCATE, resource, Outcome.FAILED, description);
      throw new AllocationException(
          AllocationException.Reason.INVALID_RESPONSE,
          Status.Code.INTERNAL,
          "Allocate",
          description,
          null,
          GoErrors.admissionFailure(
              "no containers return in allocation response " + GoErrors.EMPTY_ALLOCATE_RESPONSE));
    }
    if (resp.getContainerResponsesCount() > 1) {
      String msg =
          "container_responses has "
              + resp.getContainerResponsesCount()
              + " entries for one container request; the kubelet reads only the first";
      if (strictPreferredAllocation) {
        throw invalid(resource, "Allocate", msg);
      }
      journal.record(Kind.ALLOCATE, resource, Outcome.INFO, msg);
    }
    Allocation allocation = toAllocation(req, chosen, resp.getContainerResponses(0));

    // The kubelet records the devices (podDevices.insert) as soon as Allocate answered, at the
    // pod's admission; PreStartContainer comes later, when the container starts. So the journal
    // has the Allocate before the PreStartContainer, and a failed PreStartContainer leaves the
    // devices allocated to the pod (the container fails to start; release the pod to free them).
    model.lock.lock();
    try {
      PodRecord pod =
          pods.computeIfAbsent(
              req.podUid(), u -> new PodRecord(req.namespace(), req.podName(), req.podUid()));
      pod.allocations.put(key(req.containerName(), resource), allocation);
      journal.record(Kind.ALLOCATE, resource, Outcome.OK, describe(req) + ": " + chosen);
    } finally {
      model.lock.unlock();
    }

    if (ep.preStartRequired) {
      preStart(ep, resource, chosen);
    }
    return allocation;
  }

  private static String describe(PodRequest req) {
    return req.namespace() + "/" + req.podName() + " container " + req.containerName();
  }

  private static String key(String container, String resource) {
    return container + "\u0000" + resource;
  }

  private void preStart(Endpoint ep, String resource, List<String> ids) {
    try {
      DevicePluginGrpc.newBlockingStub(PluginConnector.channel(ep))
          .withDeadlineAfter(FakeKubelet.PRE_START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .preStartContainer(PreStartContainerRequest.newBuilder().addAllDevicesIds(ids).build());
      journal.record(Kind.PRE_START_CONTAINER, resource, Outcome.OK, ids.toString());
    } catch (StatusRuntimeException e) {
      journal.record(
          Kind.PRE_START_CONTAINER,
          resource,
          Outcome.FAILED,
          ids + ": " + PluginConnector.describe(e.getStatus()));
      // callPreStartContainerIfNeeded (manager.go), when the container starts: no admission.
      throw rpcFailed(
          "PreStartContainer",
          e,
          "device plugin PreStartContainer rpc failed with err: "
              + GoErrors.rpcError(e.getStatus()));
    }
  }

  /**
   * A container restart as the kubelet runs it: for every resource the container holds, {@code
   * PreStartContainer} again on the resource's current endpoint when its options require it, with
   * the same device IDs, whatever their health now. No {@code Allocate}.
   */
  void restartContainer(String podUid, String containerName) {
    serially(
        () -> {
          restartContainerNow(podUid, containerName);
          return null;
        });
  }

  private void restartContainerNow(String podUid, String containerName) {
    model.checkOpen();
    List<Allocation> held = new ArrayList<>();
    model.lock.lock();
    try {
      PodRecord pod = pods.get(podUid);
      if (pod != null) {
        for (Allocation a : pod.allocations.values()) {
          if (a.containerName().equals(containerName)) {
            held.add(a);
          }
        }
      }
    } finally {
      model.lock.unlock();
    }
    if (held.isEmpty()) {
      throw new IllegalArgumentException(
          "no allocation for container " + containerName + " of pod UID " + podUid);
    }
    for (Allocation a : held) {
      String resource = a.resourceName();
      Endpoint ep;
      model.lock.lock();
      try {
        ResourceState rs = model.resource(resource);
        ep = rs == null ? null : rs.endpoint;
        if (ep == null) {
          throw refuseAtStart(
              resource, "endpoint not found in cache for a registered resource: " + resource);
        }
        if (ep.fromCheckpoint || !ep.preStartRequired) {
          // Options unknown (kubelet restarted, plugin not back) or PreStart not required.
          journal.record(
              Kind.PRE_START_CONTAINER,
              resource,
              Outcome.INFO,
              "container "
                  + containerName
                  + " restarts: no PreStartContainer ("
                  + (ep.fromCheckpoint
                      ? "no plugin registered since the kubelet restarted"
                      : "not required")
                  + ")");
          continue;
        }
        if (ep.stopped) {
          throw stopped(
              resource, ep, "device plugin PreStartContainer rpc failed with err: ", false);
        }
      } finally {
        model.lock.unlock();
      }
      preStart(ep, resource, a.deviceIds());
    }
  }

  private List<String> preferredAllocation(Endpoint ep, PodRequest req, List<String> available) {
    String resource = req.resourceName();
    List<String> offered = new ArrayList<>(req.mustInclude());
    offered.addAll(available);
    // The kubelet passes the IDs from a Go set: in no particular order.
    Collections.shuffle(offered, random);
    PreferredAllocationResponse resp;
    try {
      resp =
          connector
              .withTimeout(DevicePluginGrpc.newBlockingStub(PluginConnector.channel(ep)))
              .getPreferredAllocation(
                  PreferredAllocationRequest.newBuilder()
                      .addContainerRequests(
                          ContainerPreferredAllocationRequest.newBuilder()
                              .addAllAvailableDeviceIDs(offered)
                              .addAllMustIncludeDeviceIDs(req.mustInclude())
                              .setAllocationSize(req.count()))
                      .build());
    } catch (StatusRuntimeException e) {
      journal.record(
          Kind.GET_PREFERRED_ALLOCATION,
          resource,
          Outcome.FAILED,
          PluginConnector.describe(e.getStatus()));
      // callGetPreferredAllocationIfAvailable (manager.go), during admission.
      throw rpcFailed(
          "GetPreferredAllocation",
          e,
          GoErrors.admissionFailure(
              "device plugin GetPreferredAllocation rpc failed with err: "
                  + GoErrors.rpcError(e.getStatus())));
    }
    List<String> problems = new ArrayList<>();
    List<String> preferred =
        resp.getContainerResponsesCount() == 0
            ? List.of()
            : resp.getContainerResponses(0).getDeviceIDsList();
    if (resp.getContainerResponsesCount() != 1) {
      problems.add(
          "container_responses has "
              + resp.getContainerResponsesCount()
              + " entries; one container request was sent");
    }
    if (preferred.size() != req.count()) {
      problems.add(
          "it prefers " + preferred.size() + " devices but allocation_size is " + req.count());
    }
    Set<String> seen = new HashSet<>();
    for (String id : preferred) {
      if (!seen.add(id)) {
        problems.add("device " + ResourceNames.goQuote(id) + " appears more than once");
      }
      if (!offered.contains(id)) {
        problems.add(
            "device "
                + ResourceNames.goQuote(id)
                + " is not in available_deviceIDs "
                + ResourceNames.goList(offered.stream().sorted().toList()));
      }
    }
    for (String id : req.mustInclude()) {
      if (!preferred.contains(id)) {
        problems.add("must-include device " + ResourceNames.goQuote(id) + " is missing");
      }
    }
    String summary =
        "available="
            + offered
            + " must_include="
            + req.mustInclude()
            + " size="
            + req.count()
            + " -> "
            + preferred;
    if (problems.isEmpty()) {
      journal.record(Kind.GET_PREFERRED_ALLOCATION, resource, Outcome.OK, summary);
      return List.copyOf(preferred);
    }
    if (strictPreferredAllocation) {
      journal.record(
          Kind.GET_PREFERRED_ALLOCATION,
          resource,
          Outcome.FAILED,
          summary + ": " + String.join("; ", problems));
      throw invalid(resource, "GetPreferredAllocation", String.join("; ", problems));
    }
    // The kubelet: must-include first, then preferred ∩ available, then the rest of available.
    LinkedHashSet<String> chosen = new LinkedHashSet<>(req.mustInclude());
    for (String id : preferred) {
      if (chosen.size() < req.count() && available.contains(id)) {
        chosen.add(id);
      }
    }
    for (String id : available) {
      if (chosen.size() < req.count()) {
        chosen.add(id);
      }
    }
    journal.record(
        Kind.GET_PREFERRED_ALLOCATION,
        resource,
        Outcome.INFO,
        summary + ": " + String.join("; ", problems) + "; the kubelet uses " + chosen);
    return List.copyOf(chosen);
  }

  private static Allocation toAllocation(
      PodRequest req, List<String> ids, ContainerAllocateResponse r) {
    List<MountSpec> mounts = new ArrayList<>();
    for (Mount m : r.getMountsList()) {
      mounts.add(new MountSpec(m.getContainerPath(), m.getHostPath(), m.getReadOnly()));
    }
    List<DeviceSpec> devices = new ArrayList<>();
    for (io.github.deviceplugin4j.api.v1beta1.DeviceSpec d : r.getDevicesList()) {
      devices.add(new DeviceSpec(d.getContainerPath(), d.getHostPath(), d.getPermissions()));
    }
    List<String> cdi = r.getCdiDevicesList().stream().map(CDIDevice::getName).toList();
    return new Allocation(
        req.resourceName(),
        req.podUid(),
        req.containerName(),
        ids,
        r.getEnvsMap(),
        mounts,
        devices,
        r.getAnnotationsMap(),
        cdi);
  }

  /** The device manager refused during admission (devicesToAllocate in manager.go). */
  private AllocationException refuse(String resource, String message) {
    journal.record(Kind.ALLOCATE, resource, Outcome.FAILED, message);
    return new AllocationException(
        AllocationException.Reason.NOT_ALLOCATABLE,
        Status.Code.FAILED_PRECONDITION,
        "",
        message,
        null,
        GoErrors.admissionFailure(message));
  }

  /** The device manager refused when the container starts (callPreStartContainerIfNeeded). */
  private AllocationException refuseAtStart(String resource, String message) {
    journal.record(Kind.ALLOCATE, resource, Outcome.FAILED, message);
    return new AllocationException(
        AllocationException.Reason.NOT_ALLOCATABLE,
        Status.Code.FAILED_PRECONDITION,
        "",
        message,
        null,
        message);
  }

  /**
   * A call on a stopped endpoint (endpoint.go: {@code endpoint %v has been stopped}); during
   * admission unless the container is restarting.
   */
  private AllocationException stopped(
      String resource, Endpoint ep, String prefix, boolean admission) {
    String message = prefix + "endpoint " + ep.socket + " has been stopped";
    journal.record(Kind.ALLOCATE, resource, Outcome.FAILED, message);
    return new AllocationException(
        AllocationException.Reason.ENDPOINT_STOPPED,
        Status.Code.FAILED_PRECONDITION,
        "",
        message,
        null,
        admission ? GoErrors.admissionFailure(message) : message);
  }

  private AllocationException invalid(String resource, String rpc, String message) {
    journal.record(
        rpc.equals("Allocate") ? Kind.ALLOCATE : Kind.GET_PREFERRED_ALLOCATION,
        resource,
        Outcome.FAILED,
        message);
    return new AllocationException(
        AllocationException.Reason.INVALID_RESPONSE, Status.Code.INTERNAL, rpc, message, null);
  }

  private static AllocationException rpcFailed(
      String rpc, StatusRuntimeException e, String kubeletMessage) {
    Status s = e.getStatus();
    return new AllocationException(
        AllocationException.Reason.RPC_FAILED,
        s.getCode(),
        rpc,
        s.getDescription() == null ? "" : s.getDescription(),
        e,
        kubeletMessage);
  }

  private Set<String> allocatedIdsLocked(String resource) {
    Set<String> ids = new HashSet<>();
    for (PodRecord p : pods.values()) {
      for (Allocation a : p.allocations.values()) {
        if (a.resourceName().equals(resource)) {
          ids.addAll(a.deviceIds());
        }
      }
    }
    return ids;
  }

  // ---------------------------------------------------------------------------------------------
  // Pods

  /** The current allocations (one per pod, container and resource), in order. */
  List<Allocation> allocations() {
    model.lock.lock();
    try {
      List<Allocation> out = new ArrayList<>();
      for (PodRecord p : pods.values()) {
        out.addAll(p.allocations.values());
      }
      return out;
    } finally {
      model.lock.unlock();
    }
  }

  /** Copies of the pods with allocations, in order. */
  List<PodRecord> pods() {
    model.lock.lock();
    try {
      List<PodRecord> out = new ArrayList<>();
      for (PodRecord p : pods.values()) {
        PodRecord copy = new PodRecord(p.namespace, p.name, p.uid);
        copy.allocations.putAll(p.allocations);
        out.add(copy);
      }
      return out;
    } finally {
      model.lock.unlock();
    }
  }

  /** Releases every allocation of a pod. */
  void release(String podUid) {
    model.lock.lock();
    try {
      PodRecord p = pods.remove(podUid);
      if (p == null) {
        throw new IllegalArgumentException(
            "no allocation for pod UID " + podUid + "; pods with allocations: " + pods.keySet());
      }
      for (Allocation a : p.allocations.values()) {
        journal.record(
            Kind.RELEASE,
            a.resourceName(),
            Outcome.OK,
            p.namespace + "/" + p.name + " container " + a.containerName() + ": " + a.deviceIds());
      }
    } finally {
      model.lock.unlock();
    }
  }

  /** Releases the devices of one container of a pod (all its resources). */
  void release(String podUid, String containerName) {
    model.lock.lock();
    try {
      PodRecord p = pods.get(podUid);
      List<String> keys = new ArrayList<>();
      if (p != null) {
        for (Map.Entry<String, Allocation> e : p.allocations.entrySet()) {
          if (e.getValue().containerName().equals(containerName)) {
            keys.add(e.getKey());
          }
        }
      }
      if (keys.isEmpty()) {
        throw new IllegalArgumentException(
            "no allocation for container " + containerName + " of pod UID " + podUid);
      }
      for (String k : keys) {
        Allocation a = p.allocations.remove(k);
        journal.record(
            Kind.RELEASE,
            a.resourceName(),
            Outcome.OK,
            p.namespace + "/" + p.name + " container " + containerName + ": " + a.deviceIds());
      }
      if (p.allocations.isEmpty()) {
        pods.remove(podUid);
      }
    } finally {
      model.lock.unlock();
    }
  }

  /** A pod with allocations: one per container and resource. */
  static final class PodRecord {
    final String namespace;
    final String name;
    final String uid;
    final Map<String, Allocation> allocations = new LinkedHashMap<>();

    PodRecord(String namespace, String name, String uid) {
      this.namespace = namespace;
      this.name = name;
      this.uid = uid;
    }
  }
}
