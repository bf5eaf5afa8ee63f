package io.github.deviceplugin4j.core;

/**
 * Sees what the plugin does, for metrics and tracing: every RPC the kubelet makes, every
 * registration attempt, every device list sent on a ListAndWatch stream, every discovery run. Every
 * method has a no-op default; a host with no observer builds no events at all.
 *
 * <p>Methods are called on the core's threads, some of them on the gRPC event loop: return within
 * microseconds, never block, never throw (an exception is logged once per method and otherwise
 * ignored). A Micrometer binding ships in the {@code deviceplugin4j-micrometer} module.
 *
 * <pre>{@code
 * DevicePluginHost.builder()
 *     .backend(backend)
 *     .observer(new PluginObserver() {
 *       public void onRpc(Rpc rpc) {
 *         if (!rpc.ok()) failures.increment();
 *       }
 *     })
 *     .start();
 * }</pre>
 */
@Experimental
public interface PluginObserver {

  /** The kubelet's calls on a device plugin socket, as reported in {@link Rpc#method()}. */
  enum Method {
    /** {@code GetDevicePluginOptions}. */
    GET_DEVICE_PLUGIN_OPTIONS,
    /** {@code GetPreferredAllocation}. */
    GET_PREFERRED_ALLOCATION,
    /** {@code Allocate}. */
    ALLOCATE,
    /** {@code PreStartContainer}. */
    PRE_START_CONTAINER,
    /** {@code ListAndWatch}: reported when the stream ends, with its whole lifetime as latency. */
    LIST_AND_WATCH
  }

  /**
   * One finished RPC.
   *
   * @param resourceName the resource whose socket served it
   * @param method which call
   * @param code the gRPC status code name it ended with: {@code "OK"}, {@code "INVALID_ARGUMENT"},
   *     {@code "DEADLINE_EXCEEDED"}, ... (a {@code ListAndWatch} the kubelet closed ends {@code
   *     "CANCELLED"})
   * @param nanos time from the call's arrival to its answer (or to the stream's end)
   * @param devices how many device IDs the request named (all containers together); 0 for calls
   *     that name none
   */
  record Rpc(String resourceName, Method method, String code, long nanos, int devices) {

    /**
     * Whether the call succeeded.
     *
     * @return true when {@link #code()} is {@code "OK"}
     */
    public boolean ok() {
      return "OK".equals(code);
    }
  }

  /**
   * One registration attempt with the kubelet, successful or not.
   *
   * @param resourceName the resource
   * @param mode {@link RegistrationMode#LEGACY} (a Register call) or {@link
   *     RegistrationMode#PLUGIN_WATCHER} (the kubelet's GetInfo / NotifyRegistrationStatus)
   * @param apiVersion the device plugin API version offered, e.g. {@code "v1beta1"}
   * @param attempt 1 for the first attempt of a registration round, counting up while it retries
   * @param reRegistration whether the resource had registered before in this run
   * @param success whether the kubelet accepted it
   * @param failure why it failed, for logs; empty on success
   * @param nanos how long the attempt took
   */
  record Registration(
      String resourceName,
      RegistrationMode mode,
      String apiVersion,
      int attempt,
      boolean reRegistration,
      boolean success,
      String failure,
      long nanos) {}

  /**
   * One device list sent on a ListAndWatch stream.
   *
   * @param resourceName the resource
   * @param healthy devices sent as healthy
   * @param unhealthy devices sent as unhealthy
   * @param bytes serialized size of the message
   * @param openStreams ListAndWatch streams open for this resource after this send
   */
  record DeviceListSent(
      String resourceName, int healthy, int unhealthy, int bytes, int openStreams) {}

  /**
   * One run of the backend's {@link DeviceBackend#devices()} (the first one, and each refresh).
   *
   * @param resourceName the resource
   * @param success whether it returned a valid list
   * @param failure why not, for logs; empty on success
   * @param devices devices it returned (0 when it failed)
   * @param nanos how long it took
   */
  record Discovery(String resourceName, boolean success, String failure, int devices, long nanos) {}

  /**
   * An RPC finished.
   *
   * @param rpc what happened
   */
  default void onRpc(Rpc rpc) {}

  /**
   * A registration attempt finished: in legacy mode each {@code Register} call (and each attempt
   * that could not serve the socket for it), in plugin watcher mode each {@code
   * NotifyRegistrationStatus} of the kubelet, timed from its {@code GetInfo}. Waiting for a kubelet
   * that is not there ({@code kubelet.sock} missing) is not an attempt.
   *
   * @param registration what happened
   */
  default void onRegistration(Registration registration) {}

  /**
   * A ListAndWatch stream opened; {@link #onRpc(Rpc)} reports its end.
   *
   * @param resourceName the resource
   * @param openStreams streams open for this resource, this one included
   */
  default void onStreamOpened(String resourceName, int openStreams) {}

  /**
   * A device list went out on a ListAndWatch stream.
   *
   * @param sent what was sent
   */
  default void onDeviceListSent(DeviceListSent sent) {}

  /**
   * A discovery run finished.
   *
   * @param discovery what happened
   */
  default void onDiscovery(Discovery discovery) {}
}
