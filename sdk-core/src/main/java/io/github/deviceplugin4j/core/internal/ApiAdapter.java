package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.Device;
import io.grpc.ServerServiceDefinition;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One kubelet device plugin API version: the only place that knows its generated types. Adding a
 * version means adding an adapter to {@link ApiVersions}; vendors' code does not change.
 */
public interface ApiAdapter {

  /**
   * The version string sent to the kubelet, e.g. {@code "v1beta1"}.
   *
   * @return the version
   */
  String version();

  /**
   * The fully qualified gRPC name of the DevicePlugin service this adapter serves; adapters with
   * the same name are served once.
   *
   * @return e.g. {@code "v1beta1.DevicePlugin"}
   */
  String serviceName();

  /**
   * Encodes a device list as this version's ListAndWatch message.
   *
   * @param devices validated devices
   * @return the message, sent as is to every stream
   */
  Object encodeDevices(List<Device> devices);

  /**
   * The encoded size of a message from {@link #encodeDevices(List)}.
   *
   * @param message the message
   * @return bytes on the wire, without gRPC framing
   */
  int encodedSize(Object message);

  /**
   * The DevicePlugin service of this version for one resource.
   *
   * @param plugin what the service serves
   * @return the service definition
   */
  ServerServiceDefinition devicePluginService(PluginEndpoint plugin);

  /**
   * The kubelet's {@code Register} method of this version (legacy mode).
   *
   * @return its full name, e.g. {@code v1beta1.Registration/Register}
   */
  String registerMethod();

  /**
   * The encoded {@code RegisterRequest} of this version (legacy mode).
   *
   * @param resourceName the resource
   * @param endpoint the plugin's socket file name, relative to the plugin directory
   * @param preStartRequired advertised option
   * @param preferredAllocationAvailable advertised option
   * @return the message's bytes
   */
  byte[] registerRequest(
      String resourceName,
      String endpoint,
      boolean preStartRequired,
      boolean preferredAllocationAvailable);

  /**
   * Runs this version's request path in process, without a socket, so that its classes are loaded
   * and its code compiled before the kubelet's first call: the calls that run no vendor code go
   * through the service itself (Allocate only when it is declarative), the others only through
   * their messages' marshalling. Nothing is sent, logged or recorded.
   *
   * @param plugin the resource
   * @param rounds how many times each call runs
   */
  default void warmUp(PluginEndpoint plugin, int rounds) {}

  /**
   * This version's device plugin service for a warm-up over a socket: like {@link
   * #devicePluginService} but reporting to no observer, so the calls of {@link #warmUpOverSocket}
   * are seen by nobody.
   *
   * @param plugin the resource
   * @return the service, or null when this version has no socket warm-up
   */
  default ServerServiceDefinition warmUpService(PluginEndpoint plugin) {
    return null;
  }

  /**
   * Calls a private server of {@link #warmUpService} over its socket, each call on a connection of
   * its own ({@link UnaryCall}), so that the transport (Netty, HTTP/2, gRPC's server call path, and
   * a connection's set-up as the kubelet's dial-back runs it) runs compiled when the kubelet's
   * first calls come: the in-process {@link #warmUp} cannot reach it. Only calls that run no vendor
   * code are made ({@code GetDevicePluginOptions}, and {@code Allocate} when it is declarative).
   *
   * @param plugin the resource
   * @param socket the private server's socket
   * @param calls how many calls of each kind
   * @param reader where each call's answer is read
   * @param timer where each call's deadline fires
   */
  default void warmUpOverSocket(
      PluginEndpoint plugin,
      Path socket,
      int calls,
      Executor reader,
      ScheduledExecutorService timer) {}
}
