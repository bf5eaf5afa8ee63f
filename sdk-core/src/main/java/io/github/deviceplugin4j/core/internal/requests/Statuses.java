package io.github.deviceplugin4j.core.internal.requests;

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
   * The status for any failure, possibly wrapped in a future's exception, with a description naming
   * the problem.
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
    return status.withDescription(bounded(e.getMessage())).asRuntimeException();
  }

  /**
   * The longest status description sent, in bytes as gRPC encodes it (percent-encoded UTF-8 in the
   * {@code grpc-message} trailer). grpc-java clients accept 8 KiB of trailers by default and a
   * larger one breaks the whole connection, the kubelet's device stream included.
   */
  static final int MAX_DESCRIPTION_BYTES = 6 * 1024;

  /** A description (or null) cut to fit {@link #MAX_DESCRIPTION_BYTES} once encoded. */
  static String bounded(String description) {
    if (description == null) {
      return null;
    }
    int bytes = 0;
    for (int i = 0; i < description.length(); i++) {
      char c = description.charAt(i);
      // printable ASCII but '%' travels as is; everything else as %XX per UTF-8 byte
      bytes += c >= ' ' && c < 0x7f && c != '%' ? 1 : c < 0x80 ? 3 : c < 0x800 ? 6 : 9;
      if (bytes > MAX_DESCRIPTION_BYTES) {
        int end = i > 0 && Character.isHighSurrogate(description.charAt(i - 1)) ? i - 1 : i;
        return description.substring(0, end)
            + "... (cut; "
            + description.length()
            + " characters in all)";
      }
    }
    return description;
  }
}
