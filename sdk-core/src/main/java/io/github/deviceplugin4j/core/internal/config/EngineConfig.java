package io.github.deviceplugin4j.core.internal.config;

import io.github.deviceplugin4j.core.Capabilities;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.PluginObserver;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.requests.RequestDeadlines;
import io.grpc.ServerInterceptor;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Everything the engine needs, resolved by the builder (defaults and environment applied).
 *
 * @param backends one per resource
 * @param pluginDir the kubelet's device plugin directory
 * @param registryDir the kubelet's plugins registry directory
 * @param mode the requested registration mode (may be AUTO)
 * @param socketPermissions permissions of every socket the plugin creates
 * @param listeners status listeners
 * @param allocationTimeout the builder's deprecated {@code allocationTimeout}; the request path
 *     uses {@link #requestDeadlines()}, whose Allocate and GetPreferredAllocation deadlines it set
 * @param adapters API versions, most preferred first
 * @param safetyInterval period of the safety check for missed file events
 * @param backoffInitial first retry delay after a failed registration
 * @param backoffMax cap of the retry delay
 * @param registerDeadline deadline of a Register call
 * @param streamGrace how long the kubelet may take to reopen ListAndWatch before the plugin
 *     registers again
 * @param watcherKick how long to wait for the plugin watcher before re-creating the socket
 * @param watcherFallback AUTO mode: how long the plugin watcher may ignore the socket, while {@code
 *     kubelet.sock} exists, before the resource falls back to legacy registration
 * @param coalesceWindow device list changes closer together than this are sent as one
 * @param maxMessageBytes largest ListAndWatch message
 * @param eventLoopThreads threads of the shared event loop group
 * @param requestDeadlines deadline of each kind of backend call on the kubelet's request path
 * @param hooks what the vendor plugs into the engine: observers, interceptors, capabilities
 */
public record EngineConfig(
    List<DeviceBackend> backends,
    Path pluginDir,
    Path registryDir,
    RegistrationMode mode,
    Set<PosixFilePermission> socketPermissions,
    List<PluginListener> listeners,
    Duration allocationTimeout,
    List<ApiAdapter> adapters,
    Duration safetyInterval,
    Duration backoffInitial,
    Duration backoffMax,
    Duration registerDeadline,
    Duration streamGrace,
    Duration watcherKick,
    Duration watcherFallback,
    Duration coalesceWindow,
    int maxMessageBytes,
    int eventLoopThreads,
    RequestDeadlines requestDeadlines,
    Hooks hooks) {

  /**
   * What the vendor plugs into the engine besides backends and listeners.
   *
   * @param observers see {@link PluginObserver}; empty: no events are built
   * @param interceptors applied to every resource's DevicePlugin service, the first one seeing a
   *     call first
   * @param capabilities per backend, in the order of {@link EngineConfig#backends()}; shorter (or
   *     empty): the rest have none
   */
  public record Hooks(
      List<PluginObserver> observers,
      List<ServerInterceptor> interceptors,
      List<Capabilities> capabilities) {

    /** Nothing plugged in. */
    public static final Hooks NONE = new Hooks(List.of(), List.of(), List.of());

    /** Copies the lists. */
    public Hooks {
      observers = List.copyOf(observers);
      interceptors = List.copyOf(interceptors);
      capabilities = List.copyOf(capabilities);
    }

    /**
     * The capabilities given with the backend at {@code index} of {@link EngineConfig#backends()};
     * {@link Capabilities#none()} if none.
     */
    public Capabilities capabilities(int index) {
      return index < capabilities.size() ? capabilities.get(index) : Capabilities.none();
    }
  }

  /**
   * Copies the collections; a null {@code requestDeadlines} means the defaults, null {@code hooks}
   * none.
   */
  public EngineConfig {
    backends = List.copyOf(backends);
    socketPermissions = Set.copyOf(socketPermissions);
    listeners = List.copyOf(listeners);
    adapters = List.copyOf(adapters);
    requestDeadlines = requestDeadlines == null ? RequestDeadlines.DEFAULTS : requestDeadlines;
    hooks = hooks == null ? Hooks.NONE : hooks;
  }

  /** The kubelet's socket name in the plugin directory. */
  public static final String KUBELET_SOCKET = "kubelet.sock";

  /**
   * The socket file name of a resource: its name with {@code /} replaced by {@code _}, e.g. {@code
   * vendor.example.com_fpga.sock}. Unique per valid resource name, since a domain cannot contain
   * {@code _}.
   */
  public static String socketName(String resourceName) {
    return resourceName.replace('/', '_') + ".sock";
  }
}
