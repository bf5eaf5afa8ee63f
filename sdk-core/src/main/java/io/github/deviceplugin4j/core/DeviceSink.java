package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * Where a backend that watches its hardware pushes what it sees. Thread-safe: call it from any
 * thread, as often as you like; the core coalesces bursts and sends the kubelet only effective
 * changes.
 */
public interface DeviceSink {

  /**
   * Publishes the complete current device list, replacing the previous one.
   *
   * @param snapshot every device of the resource, healthy or not
   */
  void publish(List<Device> snapshot);

  /**
   * Asks the core to call {@link DeviceBackend#devices()} soon, e.g. after a hotplug event that the
   * backend does not want to turn into a snapshot itself.
   */
  void rescan();
}
