package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.PluginObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
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
  private final EventLoopGroup loops;
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

  /** The vendor's observers, called in the order added; every event is reported at once. */
  public Observers(List<PluginObserver> observers) {
    this(observers, null);
  }

  /**
   * The vendor's observers, called in the order added, of calls served on the servers' event {@code
   * loops}: a call reported on one of them is reported in a task of its own, after the answer's
   * write (see {@link #rpcAfterAnswer}); null loops report at once.
   */
  public Observers(List<PluginObserver> observers, EventLoopGroup loops) {
    this.observers = observers.toArray(new PluginObserver[0]);
    this.enabled = this.observers.length > 0;
    this.loops = loops;
  }

  /** Whether any observer is configured; when false, build no event. */
  public boolean enabled() {
    return enabled;
  }

  /** An RPC finished. */
  public void rpc(PluginObserver.Rpc rpc) {
    each("onRpc", o -> o.onRpc(rpc));
  }

  /**
   * An RPC finished, reported after its answer is written. On an event loop, gRPC writes an answer
   * in a task it queues when the call closes; the observers then run in a task queued after it, so
   * an observer that is slow (building meters on its first report, say) never holds up the answer.
   * Elsewhere (a worker thread) they run at once: the loop writes the answer meanwhile.
   */
  public void rpcAfterAnswer(PluginObserver.Rpc rpc) {
    if (loops != null) {
      for (EventExecutor loop : loops) {
        if (loop.inEventLoop()) {
          try {
            loop.execute(() -> rpc(rpc));
            return;
          } catch (RejectedExecutionException shuttingDown) {
            break;
          }
        }
      }
    }
    rpc(rpc);
  }

  /** A registration attempt finished. */
  public void registration(PluginObserver.Registration registration) {
    each("onRegistration", o -> o.onRegistration(registration));
  }

  /** A ListAndWatch stream opened; {@code openStreams} counts it. */
  public void streamOpened(String resourceName, int openStreams) {
    each("onStreamOpened", o -> o.onStreamOpened(resourceName, openStreams));
  }

  /** A device list was sent. */
  public void deviceListSent(PluginObserver.DeviceListSent sent) {
    each("onDeviceListSent", o -> o.onDeviceListSent(sent));
  }

  /** A discovery run finished. */
  public void discovery(PluginObserver.Discovery discovery) {
    each("onDiscovery", o -> o.onDiscovery(discovery));
  }

  private void each(String method, Consumer<PluginObserver> call) {
    for (PluginObserver o : observers) {
      try {
        call.accept(o);
      } catch (RuntimeException | LinkageError e) {
        if (logged.add(method)) {
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
