package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.dra.v1.DRAPluginGrpc;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesRequest;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The DRAPlugin calls on either service version, turned into the testkit's records. */
final class DraCalls {
  private DraCalls() {}

  static Map<String, DraClaimResult> call(
      boolean prepare,
      String service,
      ManagedChannel channel,
      List<DraClaim> claims,
      Duration timeout) {
    long ms = timeout.toMillis();
    Map<String, DraClaimResult> out = new LinkedHashMap<>();
    if (service.equals(DraKubelet.V1_SERVICE)) {
      var stub =
          DRAPluginGrpc.newBlockingStub(channel).withDeadlineAfter(ms, TimeUnit.MILLISECONDS);
      List<io.github.deviceplugin4j.api.dra.v1.Claim> wire =
          claims.stream()
              .map(
                  c ->
                      io.github.deviceplugin4j.api.dra.v1.Claim.newBuilder()
                          .setNamespace(c.namespace())
                          .setUid(c.uid())
                          .setName(c.name())
                          .build())
              .toList();
      if (prepare) {
        stub.nodePrepareResources(
                NodePrepareResourcesRequest.newBuilder().addAllClaims(wire).build())
            .getClaimsMap()
            .forEach(
                (uid, r) ->
                    out.put(
                        uid,
                        new DraClaimResult(
                            r.getDevicesList().stream()
                                .map(
                                    d ->
                                        new DraDevice(
                                            d.getRequestNamesList(),
                                            d.getPoolName(),
                                            d.getDeviceName(),
                                            d.getCdiDeviceIdsList()))
                                .toList(),
                            r.getError())));
      } else {
        stub.nodeUnprepareResources(
                NodeUnprepareResourcesRequest.newBuilder().addAllClaims(wire).build())
            .getClaimsMap()
            .forEach((uid, r) -> out.put(uid, new DraClaimResult(List.of(), r.getError())));
      }
      return out;
    }
    // v1beta1, or the alpha fallback of kubelets 1.32/1.33 (v1alpha3.Node: the same messages under
    // another service name, which a driver serving only v1/v1beta1 answers Unimplemented).
    String grpcService =
        service.equals(DraKubelet.V1ALPHA3_FALLBACK_SERVICE)
            ? DraKubelet.V1ALPHA3_FALLBACK_SERVICE
            : io.github.deviceplugin4j.api.dra.v1beta1.DRAPluginGrpc.SERVICE_NAME;
    var prepareMethod =
        io.github.deviceplugin4j.api.dra.v1beta1.DRAPluginGrpc.getNodePrepareResourcesMethod()
            .toBuilder()
            .setFullMethodName(
                MethodDescriptor.generateFullMethodName(grpcService, "NodePrepareResources"))
            .build();
    var unprepareMethod =
        io.github.deviceplugin4j.api.dra.v1beta1.DRAPluginGrpc.getNodeUnprepareResourcesMethod()
            .toBuilder()
            .setFullMethodName(
                MethodDescriptor.generateFullMethodName(grpcService, "NodeUnprepareResources"))
            .build();
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(ms, TimeUnit.MILLISECONDS);
    List<io.github.deviceplugin4j.api.dra.v1beta1.Claim> wire =
        claims.stream()
            .map(
                c ->
                    io.github.deviceplugin4j.api.dra.v1beta1.Claim.newBuilder()
                        .setNamespace(c.namespace())
                        .setUid(c.uid())
                        .setName(c.name())
                        .build())
            .toList();
    if (prepare) {
      ClientCalls.blockingUnaryCall(
              channel,
              prepareMethod,
              options,
              io.github.deviceplugin4j.api.dra.v1beta1.NodePrepareResourcesRequest.newBuilder()
                  .addAllClaims(wire)
                  .build())
          .getClaimsMap()
          .forEach(
              (uid, r) ->
                  out.put(
                      uid,
                      new DraClaimResult(
                          r.getDevicesList().stream()
                              .map(
                                  d ->
                                      new DraDevice(
                                          d.getRequestNamesList(),
                                          d.getPoolName(),
                                          d.getDeviceName(),
                                          d.getCdiDeviceIdsList()))
                              .toList(),
                          r.getError())));
    } else {
      ClientCalls.blockingUnaryCall(
              channel,
              unprepareMethod,
              options,
              io.github.deviceplugin4j.api.dra.v1beta1.NodeUnprepareResourcesRequest.newBuilder()
                  .addAllClaims(wire)
                  .build())
          .getClaimsMap()
          .forEach((uid, r) -> out.put(uid, new DraClaimResult(List.of(), r.getError())));
    }
    return out;
  }
}
