package io.github.deviceplugin4j.core.internal.requests;

import io.github.deviceplugin4j.core.internal.state.DeviceListEncoder;
import io.grpc.ServerServiceDefinition;
import java.util.List;

/**
 * One kubelet device plugin API version: the only place that knows its generated types. Adding a
 * version means adding an adapter to {@link ApiVersions}; vendors' code does not change.
 */
public interface ApiAdapter extends DeviceListEncoder {

  /** The version string sent to the kubelet, e.g. {@code "v1beta1"}. */
  String version();

  /**
   * The fully qualified gRPC name of the DevicePlugin service this adapter serves, e.g. {@code
   * "v1beta1.DevicePlugin"}; adapters with the same name are served once.
   */
  @Override
  String serviceName();

  /** The DevicePlugin service of this version for one resource. */
  ServerServiceDefinition devicePluginService(PluginEndpoint plugin);

  /**
   * The full name of the kubelet's {@code Register} method of this version (legacy mode), e.g.
   * {@code v1beta1.Registration/Register}.
   */
  String registerMethod();

  /**
   * The encoded {@code RegisterRequest} of this version (legacy mode); {@code endpoint} is the
   * plugin's socket file name, relative to the plugin directory.
   */
  byte[] registerRequest(
      String resourceName,
      String endpoint,
      boolean preStartRequired,
      boolean preferredAllocationAvailable);

  /**
   * The full name of this version's {@code GetDevicePluginOptions}, e.g. {@code
   * v1beta1.DevicePlugin/GetDevicePluginOptions}, for a kubelet-like dial-back at start (its
   * request is the empty message: no bytes); null when this version has none.
   */
  default String optionsMethod() {
    return null;
  }

  /**
   * The full name of this version's {@code ListAndWatch}, e.g. {@code
   * v1beta1.DevicePlugin/ListAndWatch}, for a kubelet-like dial-back at start (its request is the
   * empty message: no bytes); null when this version has none.
   */
  default String listAndWatchMethod() {
    return null;
  }

  /**
   * Runs this version's request path in process, without a socket, so that its classes are loaded
   * and its code compiled before the kubelet's first call: the calls that run no vendor code go
   * through the service itself (Allocate only when it is declarative), the others only through
   * their messages' marshalling, each call {@code rounds} times. Nothing is sent, logged or
   * recorded.
   */
  default void warmUp(PluginEndpoint plugin, int rounds) {}

  /**
   * This version's device plugin service for a warm-up over a socket: like {@link
   * #devicePluginService} but reporting to no observer, so the calls of {@link #warmUpCalls} are
   * seen by nobody; null when this version has no socket warm-up.
   */
  default ServerServiceDefinition warmUpService(PluginEndpoint plugin) {
    return null;
  }

  /**
   * The calls the socket warm-up makes to a private server of {@link #warmUpService}: only calls
   * that run no vendor code ({@code Allocate} when it is declarative and a device is healthy,
   * otherwise {@code GetDevicePluginOptions}), made in turn; empty when this version has no socket
   * warm-up.
   */
  default List<WarmUpCall> warmUpCalls(PluginEndpoint plugin) {
    return List.of();
  }

  /**
   * One kind of call of the socket warm-up: the full method name, e.g. {@code
   * v1beta1.DevicePlugin/Allocate}, and the encoded request, sent as it is every time.
   */
  record WarmUpCall(String method, byte[] request) {}
}
