package io.github.deviceplugin4j.core;

/**
 * How a resource makes itself known to the kubelet.
 *
 * <p>The DevicePlugin service is always served on a Unix socket (never TCP) with mode {@code 0600}
 * unless configured otherwise.
 */
public enum RegistrationMode {
  /**
   * Chosen once at start: {@link #PLUGIN_WATCHER} when the plugins registry directory ({@link
   * DevicePluginHost.Builder#registryDir}) exists, otherwise {@link #LEGACY}. A DaemonSet that
   * mounts only {@code /var/lib/kubelet/device-plugins} therefore registers the legacy way, one
   * that also mounts {@code /var/lib/kubelet/plugins_registry} through the plugin watcher. {@link
   * ResourceStatus#mode()} reports the mode chosen.
   */
  AUTO,
  /**
   * The plugin serves its socket in the device plugin directory and calls {@code Register} on the
   * kubelet's {@code kubelet.sock} there. It re-registers when its socket is deleted or when {@code
   * kubelet.sock} is created again (both happen when the kubelet restarts).
   */
  LEGACY,
  /**
   * The plugin serves one socket in the plugins registry directory with both the {@code
   * pluginregistration.Registration} service ({@code GetInfo}, {@code NotifyRegistrationStatus})
   * and the DevicePlugin service; the kubelet discovers it, and re-discovers it after a restart.
   * Every API version the SDK speaks is offered.
   */
  PLUGIN_WATCHER
}
