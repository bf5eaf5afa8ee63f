package io.github.deviceplugin4j.testkit.internal;

import io.github.deviceplugin4j.api.podresources.v1.AllocatableResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.AllocatableResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.GetPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.GetPodResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.ListPodResourcesRequest;
import io.github.deviceplugin4j.api.podresources.v1.ListPodResourcesResponse;
import io.github.deviceplugin4j.api.podresources.v1.PodResources;
import io.github.deviceplugin4j.api.podresources.v1.PodResourcesListerGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Optional;

/** The kubelet's {@code v1.PodResourcesLister}, answering from a {@link Source}. */
public final class PodResourcesService extends PodResourcesListerGrpc.PodResourcesListerImplBase {

  /** Where the answers come from. */
  public interface Source {
    /**
     * Every pod with allocated devices.
     *
     * @return the pods
     */
    List<PodResources> list();

    /**
     * One pod.
     *
     * @param namespace the namespace
     * @param name the pod name
     * @return the pod, empty when unknown
     */
    Optional<PodResources> get(String namespace, String name);

    /**
     * The allocatable (healthy) devices.
     *
     * @return the answer
     */
    AllocatableResourcesResponse allocatable();

    /**
     * Records a call in the event log.
     *
     * @param detail what was asked and answered
     * @param ok whether it succeeded
     */
    void event(String detail, boolean ok);
  }

  private final Source source;

  /**
   * Creates the service.
   *
   * @param source the answers
   */
  public PodResourcesService(Source source) {
    this.source = source;
  }

  @Override
  public void list(
      ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
    List<PodResources> pods = source.list();
    source.event("List: " + pods.size() + " pods", true);
    response.onNext(ListPodResourcesResponse.newBuilder().addAllPodResources(pods).build());
    response.onCompleted();
  }

  @Override
  public void getAllocatableResources(
      AllocatableResourcesRequest request, StreamObserver<AllocatableResourcesResponse> response) {
    AllocatableResourcesResponse r = source.allocatable();
    source.event("GetAllocatableResources: " + r.getDevicesCount() + " device entries", true);
    response.onNext(r);
    response.onCompleted();
  }

  @Override
  public void get(
      GetPodResourcesRequest request, StreamObserver<GetPodResourcesResponse> response) {
    Optional<PodResources> pod = source.get(request.getPodNamespace(), request.getPodName());
    if (pod.isEmpty()) {
      String msg =
          "pod "
              + request.getPodName()
              + " in namespace "
              + request.getPodNamespace()
              + " not found";
      source.event("Get: " + msg, false);
      response.onError(Status.UNKNOWN.withDescription(msg).asRuntimeException());
      return;
    }
    source.event("Get " + request.getPodNamespace() + "/" + request.getPodName(), true);
    response.onNext(GetPodResourcesResponse.newBuilder().setPodResources(pod.get()).build());
    response.onCompleted();
  }
}
