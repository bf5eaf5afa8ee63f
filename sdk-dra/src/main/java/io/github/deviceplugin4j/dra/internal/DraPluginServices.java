package io.github.deviceplugin4j.dra.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import io.github.deviceplugin4j.api.dra.v1.DRAPluginGrpc;
import io.github.deviceplugin4j.api.dra.v1.Device;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourceResponse;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourceResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesResponse;
import io.github.deviceplugin4j.dra.Claim;
import io.github.deviceplugin4j.dra.PreparedDevice;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's DRAPlugin service, v1 and v1beta1 (identical messages, so v1beta1 is translated
 * through the wire bytes), on one {@link ClaimService}. Calls arrive on the event loop and are
 * handed to the claim executor: the driver may block, and waiting for the lock does.
 */
public final class DraPluginServices {

  private static final Logger LOG = LoggerFactory.getLogger(DraPluginServices.class);

  private final ClaimService claims;
  private final Executor executor;

  /**
   * Services for one driver.
   *
   * @param claims the claim semantics
   * @param executor where calls run, one at a time in practice (the lock serializes them)
   */
  public DraPluginServices(ClaimService claims, Executor executor) {
    this.claims = claims;
    this.executor = executor;
  }

  /**
   * Both versions of the service.
   *
   * @return the definitions to serve
   */
  public List<ServerServiceDefinition> definitions() {
    return List.of(new V1().bindService(), new V1Beta1().bindService());
  }

  /**
   * Handles a v1 prepare.
   *
   * @param request the request
   * @return the response
   * @throws IOException when the lock or checkpoint fails
   * @throws InterruptedException when interrupted
   */
  NodePrepareResourcesResponse prepare(NodePrepareResourcesRequest request)
      throws IOException, InterruptedException {
    Map<String, ClaimService.Outcome> outcomes = claims.prepare(toClaims(request.getClaimsList()));
    NodePrepareResourcesResponse.Builder out = NodePrepareResourcesResponse.newBuilder();
    outcomes.forEach(
        (uid, outcome) -> {
          NodePrepareResourceResponse.Builder entry = NodePrepareResourceResponse.newBuilder();
          if (outcome.error().isEmpty()) {
            outcome.devices().forEach(d -> entry.addDevices(toWire(d)));
          } else {
            entry.setError(outcome.error());
          }
          out.putClaims(uid, entry.build());
        });
    return out.build();
  }

  NodeUnprepareResourcesResponse unprepare(NodeUnprepareResourcesRequest request)
      throws IOException, InterruptedException {
    Map<String, ClaimService.Outcome> outcomes =
        claims.unprepare(toClaims(request.getClaimsList()));
    NodeUnprepareResourcesResponse.Builder out = NodeUnprepareResourcesResponse.newBuilder();
    outcomes.forEach(
        (uid, outcome) ->
            out.putClaims(
                uid, NodeUnprepareResourceResponse.newBuilder().setError(outcome.error()).build()));
    return out.build();
  }

  private static List<Claim> toClaims(List<io.github.deviceplugin4j.api.dra.v1.Claim> wire) {
    return wire.stream().map(c -> new Claim(c.getNamespace(), c.getUid(), c.getName())).toList();
  }

  private static Device toWire(PreparedDevice d) {
    Device.Builder b =
        Device.newBuilder()
            .setPoolName(d.poolName())
            .setDeviceName(d.deviceName())
            .addAllCdiDeviceIds(d.cdiDeviceIds());
    for (String request : d.requestNames()) {
      // The kubelet knows requests, not subrequests: "request/subrequest" goes out as "request".
      int slash = request.indexOf('/');
      b.addRequestNames(slash < 0 ? request : request.substring(0, slash));
    }
    return b.build();
  }

  /** A call body that may block. */
  private interface Call<T> {
    T run() throws IOException, InterruptedException;
  }

  private <T> void dispatch(String method, Call<T> call, StreamObserver<T> out) {
    try {
      executor.execute(
          () -> {
            T response;
            try {
              response = call.run();
            } catch (IOException e) {
              LOG.error("{} failed: {}", method, e.getMessage());
              fail(
                  out,
                  Status.UNAVAILABLE.withDescription(method + " could not run: " + e.getMessage()));
              return;
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              fail(out, Status.UNAVAILABLE.withDescription("the DRA plugin is stopping"));
              return;
            } catch (RuntimeException e) {
              LOG.error("{} failed", method, e);
              fail(out, Status.INTERNAL.withDescription(method + " failed: " + e).withCause(e));
              return;
            }
            try {
              out.onNext(response);
              out.onCompleted();
            } catch (RuntimeException e) {
              // The kubelet gave up on the call (deadline, restart); what was prepared is recorded
              // and its repeat is answered from the checkpoint.
              LOG.info("{}: the kubelet is gone before the answer: {}", method, e.toString());
            }
          });
    } catch (RejectedExecutionException e) {
      fail(out, Status.UNAVAILABLE.withDescription("the DRA plugin is stopping"));
    }
  }

  private static void fail(StreamObserver<?> out, Status status) {
    try {
      out.onError(status.asRuntimeException());
    } catch (RuntimeException e) {
      LOG.debug("the kubelet is gone before the error: {}", e.toString());
    }
  }

  private final class V1 extends DRAPluginGrpc.DRAPluginImplBase {
    @Override
    public void nodePrepareResources(
        NodePrepareResourcesRequest request, StreamObserver<NodePrepareResourcesResponse> out) {
      dispatch("NodePrepareResources", () -> prepare(request), out);
    }

    @Override
    public void nodeUnprepareResources(
        NodeUnprepareResourcesRequest request, StreamObserver<NodeUnprepareResourcesResponse> out) {
      dispatch("NodeUnprepareResources", () -> unprepare(request), out);
    }
  }

  private final class V1Beta1
      extends io.github.deviceplugin4j.api.dra.v1beta1.DRAPluginGrpc.DRAPluginImplBase {
    @Override
    public void nodePrepareResources(
        io.github.deviceplugin4j.api.dra.v1beta1.NodePrepareResourcesRequest request,
        StreamObserver<io.github.deviceplugin4j.api.dra.v1beta1.NodePrepareResourcesResponse> out) {
      dispatch(
          "NodePrepareResources",
          () ->
              convert(
                  prepare(convert(request, NodePrepareResourcesRequest.parser())),
                  io.github.deviceplugin4j.api.dra.v1beta1.NodePrepareResourcesResponse.parser()),
          out);
    }

    @Override
    public void nodeUnprepareResources(
        io.github.deviceplugin4j.api.dra.v1beta1.NodeUnprepareResourcesRequest request,
        StreamObserver<io.github.deviceplugin4j.api.dra.v1beta1.NodeUnprepareResourcesResponse>
            out) {
      dispatch(
          "NodeUnprepareResources",
          () ->
              convert(
                  unprepare(convert(request, NodeUnprepareResourcesRequest.parser())),
                  io.github.deviceplugin4j.api.dra.v1beta1.NodeUnprepareResourcesResponse.parser()),
          out);
    }
  }

  /** v1 and v1beta1 messages are the same on the wire. */
  static <T> T convert(com.google.protobuf.MessageLite from, com.google.protobuf.Parser<T> to) {
    try {
      return to.parseFrom(from.toByteString());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("v1 and v1beta1 DRA messages differ", e);
    }
  }
}
