package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.PluginObserver;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls the vendor's {@link PluginObserver}s. Callers check {@link #enabled()} before they build an
 * event, so a host without observers builds none. An observer that throws is logged once per method
 * (and then ignored); the call that reported the event goes on.
 */
public final class Observers {

  private static final Logger LOG = LoggerFactory.getLogger(Observers.class);

  /** No observers: {@link #enabled()} is false. */
  public static final Observers NONE = new Observers(List.of());

  private final PluginObserver[] observers;
  private final boolean enabled;
  private final AtomicBoolean rpcLogged = new AtomicBoolean();
  private final AtomicBoolean registrationLogged = new AtomicBoolean();
  private final AtomicBoolean streamLogged = new AtomicBoolean();
  private final AtomicBoolean sentLogged = new AtomicBoolean();
  private final AtomicBoolean discoveryLogged = new AtomicBoolean();

  /**
   * Observers.
   *
   * @param observers the vendor's observers, in the order added
   */
  public Observers(List<PluginObserver> observers) {
    this.observers = observers.toArray(new PluginObserver[0]);
    this.enabled = this.observers.length > 0;
  }

  /**
   * Whether any observer is configured; when false, build no event.
   *
   * @return true when events are wanted
   */
  public boolean enabled() {
    return enabled;
  }

  /**
   * An RPC finished.
   *
   * @param rpc the event
   */
  public void rpc(PluginObserver.Rpc rpc) {
    each("onRpc", rpcLogged, o -> o.onRpc(rpc));
  }

  /**
   * A registration attempt finished.
   *
   * @param registration the event
   */
  public void registration(PluginObserver.Registration registration) {
    each("onRegistration", registrationLogged, o -> o.onRegistration(registration));
  }

  /**
   * A ListAndWatch stream opened.
   *
   * @param resourceName the resource
   * @param openStreams open streams, this one included
   */
  public void streamOpened(String resourceName, int openStreams) {
    each("onStreamOpened", streamLogged, o -> o.onStreamOpened(resourceName, openStreams));
  }

  /**
   * A device list was sent.
   *
   * @param sent the event
   */
  public void deviceListSent(PluginObserver.DeviceListSent sent) {
    each("onDeviceListSent", sentLogged, o -> o.onDeviceListSent(sent));
  }

  /**
   * A discovery run finished.
   *
   * @param discovery the event
   */
  public void discovery(PluginObserver.Discovery discovery) {
    each("onDiscovery", discoveryLogged, o -> o.onDiscovery(discovery));
  }

  private void each(String method, AtomicBoolean logged, Consumer<PluginObserver> call) {
    for (PluginObserver o : observers) {
      try {
        call.accept(o);
      } catch (RuntimeException | LinkageError e) {
        if (logged.compareAndSet(false, true)) {
          LOG.warn(
              "PluginObserver {}.{} threw; ignored (logged once)",
              o.getClass().getName(),
              method,
              e);
        }
      }
    }
  }
}
