package io.github.deviceplugin4j.testkit.internal;

import io.grpc.Status;

/**
 * Error texts as the kubelet's Go code prints them, for the fake kubelet's messages: a vendor's
 * test may match the text a real kubelet shows in a pod's events or returns to {@code Register}.
 */
public final class GoErrors {
  /**
   * What the kubelet's device manager prints for an {@code AllocateResponse} without container
   * responses: {@code fmt.Errorf("no containers return in allocation response %v", resp)} in {@code
   * allocateContainerResources} ({@code pkg/kubelet/cm/devicemanager/manager.go}) formats the
   * response with the {@code String()} method gogo-protobuf generated in {@code
   * k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.pb.go} (v1.26 to v1.32).
   */
  public static final String EMPTY_ALLOCATE_RESPONSE =
      "&AllocateResponse{ContainerResponses:[]*ContainerAllocateResponse{},}";

  private GoErrors() {}

  /**
   * A gRPC status as grpc-go's {@code status.Error} prints it: {@code rpc error: code =
   * Unimplemented desc = unknown service v1beta1.DevicePlugin}.
   *
   * @param s the status
   * @return the text
   */
  public static String rpcError(Status s) {
    String desc = s.getDescription() == null ? "" : s.getDescription();
    return "rpc error: code = " + codeName(s.getCode()) + " desc = " + desc;
  }

  /**
   * The name grpc-go's {@code codes.Code.String()} gives a code ({@code CANCELLED} is {@code
   * Canceled} there).
   *
   * @param code the code
   * @return the Go name
   */
  public static String codeName(Status.Code code) {
    if (code == Status.Code.CANCELLED) {
      return "Canceled";
    }
    if (code == Status.Code.OK) {
      return "OK";
    }
    StringBuilder out = new StringBuilder();
    for (String part : code.name().split("_")) {
      out.append(part.charAt(0)).append(part.substring(1).toLowerCase(java.util.Locale.ROOT));
    }
    return out.toString();
  }

  /**
   * A pod admission failure as the kubelet words it for an error that is not an admission error of
   * its own type: {@code unexpectedAdmissionError.Error()} in {@code
   * pkg/kubelet/cm/admission/errors.go} (reason {@code UnexpectedAdmissionError}).
   *
   * @param cause the device manager's error text
   * @return {@code Allocate failed due to <cause>, which is unexpected}
   */
  public static String admissionFailure(String cause) {
    return "Allocate failed due to " + cause + ", which is unexpected";
  }
}
