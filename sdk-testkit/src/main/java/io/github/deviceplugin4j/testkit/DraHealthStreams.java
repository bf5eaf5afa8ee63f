package io.github.deviceplugin4j.testkit;

import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
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

  static void open(
      String service, ManagedChannel channel, String driver, Supplier<Instant> now, Sink target) {
    if (service.equals(FakeKubelet.DRA_HEALTH_V1_SERVICE)) {
      io.github.deviceplugin4j.api.drahealth.v1.DRAResourceHealthGrpc.newStub(channel)
          .nodeWatchResources(
              io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest
                  .getDefaultInstance(),
              new ClientResponseObserver<
                  io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest,
                  io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesResponse>() {
                @Override
                public void beforeStart(
                    ClientCallStreamObserver<
                            io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest>
                        call) {
                  target.started(call);
                }

                @Override
                public void onNext(
                    io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesResponse m) {
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
      return;
    }
    io.github.deviceplugin4j.api.drahealth.v1alpha1.DRAResourceHealthGrpc.newStub(channel)
        .nodeWatchResources(
            io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesRequest
                .getDefaultInstance(),
            new ClientResponseObserver<
                io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesRequest,
                io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesResponse>() {
              @Override
              public void beforeStart(
                  ClientCallStreamObserver<
                          io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesRequest>
                      call) {
                target.started(call);
              }

              @Override
              public void onNext(
                  io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesResponse m) {
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
