package io.github.deviceplugin4j.dra;

import java.util.List;

/**
 * Where a {@link DraHealthReporter} pushes device health. Thread-safe: call it from any thread; the
 * host sends the kubelet each effective change and re-sends the last list before the kubelet's
 * timeout.
 */
public interface DraHealthSink {

  /**
   * Publishes the health of every device of the driver, replacing the previous list.
   *
   * @param devices the complete list
   */
  void publish(List<DraDeviceHealth> devices);
}
