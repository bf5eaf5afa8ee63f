package io.github.deviceplugin4j.testkit;

import java.time.Instant;
import java.util.Objects;

/**
 * One successful registration of a device plugin with the {@link FakeKubelet}.
 *
 * @param resourceName the extended resource name, e.g. {@code example.com/fpga}
 * @param endpoint the absolute path of the plugin's {@code DevicePlugin} socket as the kubelet
 *     dialled it (in legacy mode the {@code RegisterRequest.endpoint} joined to the plugin
 *     directory)
 * @param version the API version: the one in the {@code RegisterRequest}, or in plugin-watcher mode
 *     the first of the plugin's supported versions that the kubelet supports
 * @param preStartRequired what {@code GetDevicePluginOptions} answered
 * @param preferredAllocationAvailable what {@code GetDevicePluginOptions} answered
 * @param mode how the plugin registered
 * @param at when the kubelet accepted the registration (just before answering the plugin)
 * @param seq the event log position at which it was accepted: a registration is after a {@link
 *     Mark} when {@code seq > mark.seq()}
 * @param nanos {@link System#nanoTime()} when it was accepted, to measure intervals against {@link
 *     Mark#nanos()} or {@link KubeletEvent#nanos()}
 */
public record Registration(
    String resourceName,
    String endpoint,
    String version,
    boolean preStartRequired,
    boolean preferredAllocationAvailable,
    Mode mode,
    Instant at,
    long seq,
    long nanos) {

  /** How a plugin registered. */
  public enum Mode {
    /** The plugin called {@code Register} on {@code kubelet.sock} in the plugin directory. */
    LEGACY,
    /** The kubelet found the plugin's socket in the plugins registry directory. */
    PLUGIN_WATCHER
  }

  /**
   * Checks the components.
   *
   * @param resourceName see {@link #resourceName()}
   * @param endpoint see {@link #endpoint()}
   * @param version see {@link #version()}
   * @param preStartRequired see {@link #preStartRequired()}
   * @param preferredAllocationAvailable see {@link #preferredAllocationAvailable()}
   * @param mode see {@link #mode()}
   * @param at see {@link #at()}
   * @param seq see {@link #seq()}
   * @param nanos see {@link #nanos()}
   */
  public Registration {
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(at, "at");
  }

  /**
   * Whether this registration was accepted after a mark was taken.
   *
   * @param mark a mark from {@link FakeKubelet#mark()}
   * @return true when it is newer than the mark
   */
  public boolean isAfter(Mark mark) {
    return seq > mark.seq();
  }
}
