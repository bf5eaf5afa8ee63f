package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.RegistrationMode;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls every listener; a listener's exception is logged and does not reach the engine. */
public final class Listeners {

  private static final Logger LOG = LoggerFactory.getLogger(Listeners.class);

  private final List<PluginListener> listeners;

  /** The vendor's listeners. */
  public Listeners(List<PluginListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  public void registered(String resource, RegistrationMode mode, boolean again) {
    each(l -> l.onRegistered(resource, mode, again));
  }

  public void kubeletLost(String resource) {
    each(l -> l.onKubeletLost(resource));
  }

  public void devicesChanged(String resource, int total, int healthy) {
    each(l -> l.onDevicesChanged(resource, total, healthy));
  }

  public void error(String resource, DevicePluginException error) {
    each(l -> l.onError(resource, error));
  }

  public void stopped() {
    each(PluginListener::onStopped);
  }

  private void each(Consumer<PluginListener> call) {
    for (PluginListener l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException e) {
        LOG.warn("PluginListener {} threw; ignored", l.getClass().getName(), e);
      }
    }
  }
}
