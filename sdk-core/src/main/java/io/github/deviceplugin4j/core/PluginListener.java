package io.github.deviceplugin4j.core;

/**
 * Receives what happens to each resource, e.g. to drive a readiness probe ({@link ReadinessFile})
 * or metrics. Every method has a no-op default. Methods are called on the core's threads: return
 * quickly and do not block. An exception thrown by a listener is logged and otherwise ignored.
 *
 * <pre>{@code
 * DevicePluginHost.builder()
 *     .backend(backend)
 *     .listener(new PluginListener() {
 *       public void onRegistered(String resource, RegistrationMode mode, boolean again) {
 *         registrations.increment();
 *       }
 *     })
 *     .start();
 * }</pre>
 */
public interface PluginListener {

  /**
   * The kubelet accepted the resource.
   *
   * @param resourceName the resource
   * @param mode how it registered: {@link RegistrationMode#LEGACY} or {@link
   *     RegistrationMode#PLUGIN_WATCHER}
   * @param reRegistration whether this is not the first registration of this run (the kubelet
   *     restarted or dropped the plugin)
   */
  default void onRegistered(String resourceName, RegistrationMode mode, boolean reRegistration) {}

  /**
   * The kubelet is gone for this resource (its socket or the plugin's socket was deleted, or it
   * closed the device stream and did not come back). The core is already working on registering
   * again.
   *
   * @param resourceName the resource
   */
  default void onKubeletLost(String resourceName) {}

  /**
   * The device list the kubelet sees changed.
   *
   * @param resourceName the resource
   * @param total number of devices
   * @param healthy number of healthy devices
   */
  default void onDevicesChanged(String resourceName, int total, int healthy) {}

  /**
   * Something went wrong; the plugin keeps running.
   *
   * @param resourceName the resource
   * @param error what went wrong, typed (e.g. {@link RegistrationException}, {@link
   *     InvalidBackendDataException}, {@link BackendException})
   */
  default void onError(String resourceName, DevicePluginException error) {}

  /**
   * The host stopped: every resource's server is closed, its socket removed and its backend
   * stopped, and no other callback follows. Called once, on the thread that closed the host ({@link
   * DevicePluginHost#close()}, or the shutdown hook of {@link DevicePluginHost.Builder#run()});
   * also called when {@code start()} fails after the resources began to start.
   */
  default void onStopped() {}
}
