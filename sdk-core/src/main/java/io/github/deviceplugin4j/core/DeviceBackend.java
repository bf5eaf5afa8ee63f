package io.github.deviceplugin4j.core;

import java.time.Duration;
import java.util.List;

/**
 * The one interface a vendor implements: which resource, and which devices.
 *
 * <p>The core calls {@link #devices()} at start, every {@link #pollInterval()} when that is
 * positive, and whenever the backend asks through {@link DeviceSink#rescan()}. A backend that
 * watches its hardware (udev, inotify, a vendor library's callbacks) may also push complete
 * snapshots to the sink given to {@link #start(DeviceSink)}. Either way, only effective changes
 * reach the kubelet.
 *
 * <p>Optional capabilities are separate one-method interfaces a backend may also implement: {@link
 * Allocator}, {@link PreferredAllocator}, {@link PreStartHook}. The options advertised to the
 * kubelet are derived from which ones it implements.
 *
 * <pre>{@code
 * class MyBackend implements DeviceBackend {
 *   public String resourceName() { return "example.com/widget"; }
 *   public List<Device> devices() {
 *     return List.of(Device.builder("w0").deviceNode(DeviceNode.rw("/dev/widget0")).build());
 *   }
 * }
 * }</pre>
 */
public interface DeviceBackend {

  /**
   * The extended resource name, e.g. {@code vendor.example.com/fpga}. Checked against the kubelet's
   * rules when the plugin is built.
   *
   * @return the resource name
   */
  String resourceName();

  /**
   * The complete current device list. May be slow (it may read sysfs); it is never called on the
   * kubelet's request path. It is called from the core's threads, and a rescan requested while a
   * call runs may overlap it: keep it safe to call concurrently. An exception is logged and
   * reported, and the last good list stays.
   *
   * @return every device of the resource, healthy or not
   * @throws Exception when discovery fails
   */
  List<Device> devices() throws Exception;

  /**
   * How often the core calls {@link #devices()}; zero or negative means never after start (the
   * backend pushes changes itself, or its devices never change). The default is never.
   *
   * @return the poll interval
   */
  default Duration pollInterval() {
    return Duration.ZERO;
  }

  /**
   * Called once when the plugin starts, before the first call to {@link #devices()}. A backend that
   * watches its hardware keeps the sink and publishes to it from its own threads.
   *
   * @param sink where to push snapshots
   * @throws Exception when the backend cannot start; the plugin does not start either
   */
  default void start(DeviceSink sink) throws Exception {}

  /** Called once when the plugin stops; release threads and watches here. */
  default void stop() {}
}
