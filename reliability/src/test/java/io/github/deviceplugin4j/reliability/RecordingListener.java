package io.github.deviceplugin4j.reliability;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.RegistrationMode;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts what a host reports. */
class RecordingListener implements PluginListener {
  final AtomicInteger registered = new AtomicInteger();
  final AtomicInteger lost = new AtomicInteger();
  final AtomicInteger devicesChanged = new AtomicInteger();
  final List<DevicePluginException> errors = new CopyOnWriteArrayList<>();

  @Override
  public void onRegistered(String resourceName, RegistrationMode mode, boolean reRegistration) {
    registered.incrementAndGet();
  }

  @Override
  public void onKubeletLost(String resourceName) {
    lost.incrementAndGet();
  }

  @Override
  public void onDevicesChanged(String resourceName, int total, int healthy) {
    devicesChanged.incrementAndGet();
  }

  @Override
  public void onError(String resourceName, DevicePluginException error) {
    errors.add(error);
  }

  boolean hasError(Class<? extends DevicePluginException> type, String fragment) {
    return errors.stream()
        .anyMatch(e -> type.isInstance(e) && String.valueOf(e.getMessage()).contains(fragment));
  }
}
