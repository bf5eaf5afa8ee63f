package io.github.deviceplugin4j.core;

/**
 * Reads a host's package-private state for the suites (this class sits in the core's package; the
 * core has no module descriptor, so the split package works on the class path).
 */
public final class HostProbe {
  private HostProbe() {}

  /**
   * The ListAndWatch streams the plugin has open for a resource.
   *
   * @param host the host
   * @param resource the resource name
   * @return open streams
   */
  public static int openStreams(DevicePluginHost host, String resource) {
    return host.openStreams(resource);
  }
}
