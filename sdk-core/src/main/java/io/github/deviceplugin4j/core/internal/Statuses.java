package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.DeviceUnavailableException;
import io.github.deviceplugin4j.core.InvalidRequestException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/** Maps the SDK's typed exceptions to gRPC statuses the kubelet sees. */
public final class Statuses {

  private Statuses() {}

  /**
   * The status for a failure.
   *
   * @param error any failure, possibly wrapped in a future's exception
   * @return a status with a description naming the problem
   */
  public static StatusRuntimeException of(Throwable error) {
    DevicePluginException e = RequestHandler.unwrap(error);
    Status status;
    if (e instanceof InvalidRequestException) {
      status = Status.INVALID_ARGUMENT;
    } else if (e instanceof DeviceUnavailableException) {
      status = Status.FAILED_PRECONDITION;
    } else if (e instanceof BackendException b && b.timedOut()) {
      status = Status.DEADLINE_EXCEEDED;
    } else {
      status = Status.INTERNAL;
    }
    return status.withDescription(e.getMessage()).asRuntimeException();
  }
}
