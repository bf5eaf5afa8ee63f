package io.github.deviceplugin4j.docs.host;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.RegistrationMode;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** A listener that keeps the figures a metrics endpoint would export. */
// tag::listener[]
public class Metrics implements PluginListener {

  final LongAdder registrations = new LongAdder();
  final LongAdder kubeletLost = new LongAdder();
  final LongAdder errors = new LongAdder();
  final ConcurrentHashMap<String, AtomicInteger> healthy = new ConcurrentHashMap<>();

  @Override
  public void onRegistered(String resource, RegistrationMode mode, boolean reRegistration) {
    registrations.increment();
  }

  @Override
  public void onKubeletLost(String resource) {
    kubeletLost.increment();
  }

  @Override
  public void onDevicesChanged(String resource, int total, int healthyNow) {
    healthy.computeIfAbsent(resource, r -> new AtomicInteger()).set(healthyNow);
  }

  @Override
  public void onError(String resource, DevicePluginException error) {
    errors.increment(); // error.getMessage() says what happened and what to do
  }
}
// end::listener[]
