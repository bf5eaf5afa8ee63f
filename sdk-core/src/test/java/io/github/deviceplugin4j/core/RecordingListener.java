package io.github.deviceplugin4j.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records every listener call as a string, plus the errors. */
final class RecordingListener implements PluginListener {

  final List<String> events = new CopyOnWriteArrayList<>();
  final List<DevicePluginException> errors = new CopyOnWriteArrayList<>();
  final List<Long> registeredNanos = new CopyOnWriteArrayList<>();

  @Override
  public void onRegistered(String resourceName, RegistrationMode mode, boolean reRegistration) {
    registeredNanos.add(System.nanoTime());
    events.add("registered " + resourceName + " " + mode + (reRegistration ? " again" : ""));
  }

  @Override
  public void onKubeletLost(String resourceName) {
    events.add("lost " + resourceName);
  }

  @Override
  public void onDevicesChanged(String resourceName, int total, int healthy) {
    events.add("devices " + resourceName + " " + total + "/" + healthy);
  }

  @Override
  public void onError(String resourceName, DevicePluginException error) {
    errors.add(error);
  }

  long count(String prefix) {
    return events.stream().filter(e -> e.startsWith(prefix)).count();
  }
}
