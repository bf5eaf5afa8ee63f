package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.drahealth.v1.DRAResourceHealthGrpc;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesResponse;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

/** {@code NodeWatchResources} on either health service version, turned into the records. */
final class DraHealthStreams {
  private DraHealthStreams() {}

  /** Where the stream's events go. */
  interface Sink {
    void started(ClientCallStreamObserver<?> call);

    void onNext(List<DraDeviceHealth> devices);

    void onError(Throwable t);

    void onCompleted();
  }

  /**
   * Opens the watch on the given service. The v1 and v1alpha1 messages are the same on the wire
   * (upstream says so; the .proto files agree field for field), so one call shape serves both: the
   * v1 method descriptor with the chosen service's name.
   */
  static void open(
      String service, ManagedChannel channel, String driver, Supplier<Instant> now, Sink target) {
    MethodDescriptor<NodeWatchResourcesRequest, NodeWatchResourcesResponse> method =
        DRAResourceHealthGrpc.getNodeWatchResourcesMethod().toBuilder()
            .setFullMethodName(
                MethodDescriptor.generateFullMethodName(service, "NodeWatchResources"))
            .build();
    ClientCalls.asyncServerStreamingCall(
        channel.newCall(method, CallOptions.DEFAULT),
        NodeWatchResourcesRequest.getDefaultInstance(),
        new ClientResponseObserver<NodeWatchResourcesRequest, NodeWatchResourcesResponse>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<NodeWatchResourcesRequest> call) {
            target.started(call);
          }

          @Override
          public void onNext(NodeWatchResourcesResponse m) {
            Instant at = now.get();
            target.onNext(
                m.getDevicesList().stream()
                    .map(
                        d ->
                            new DraDeviceHealth(
                                driver,
                                d.getDevice().getPoolName(),
                                d.getDevice().getDeviceName(),
                                status(d.getHealthValue()),
                                d.getMessage(),
                                d.getLastUpdatedTime(),
                                d.getHealthCheckTimeoutSeconds(),
                                at))
                    .toList());
          }

          @Override
          public void onError(Throwable t) {
            target.onError(t);
          }

          @Override
          public void onCompleted() {
            target.onCompleted();
          }
        });
  }

  private static DraDeviceHealth.Status status(int value) {
    return switch (value) {
      case 1 -> DraDeviceHealth.Status.HEALTHY;
      case 2 -> DraDeviceHealth.Status.UNHEALTHY;
      default -> DraDeviceHealth.Status.UNKNOWN;
    };
  }
}
