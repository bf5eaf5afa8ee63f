package io.github.deviceplugin4j.core.internal.engine;

import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.PluginObserver;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.RateLimitedLog;
import io.github.deviceplugin4j.core.internal.SerialExecutor;
import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * Discovery of one resource's devices: the backend's lifecycle, its {@code devices()} reads (one at
 * a time, so that lists are published in the order read), rescans and polling.
 */
final class Discovery {

  private static final Logger LOG = Loggers.resource();
  private static final Duration WARN_PERIOD = Duration.ofMinutes(1);

  private final String name;
  private final DeviceBackend backend;
  private final DeviceState devices;
  private final Shared shared;
  private final SerialExecutor reads;
  private final Consumer<BackendException> failed;
  private final RateLimitedLog log = new RateLimitedLog(LOG, WARN_PERIOD);
  private final AtomicBoolean rescanQueued = new AtomicBoolean();
  private final DeviceSink sink;
  private volatile boolean closed;
  // Whether devices() has returned a list once: until then there is no "last good list".
  private volatile boolean listed;
  // Orders the backend's pushes and the lists read by rescans: a read that a push overtook (it
  // started before the push and ends after it) is older than the pushed list and is dropped,
  // otherwise it would replace the pushed list (and a push not yet applied would be lost).
  private final Object order = new Object();
  private long pushes;

  /** Discovery for a backend; {@code failed} is told about every backend failure once logged. */
  Discovery(
      DeviceBackend backend,
      DeviceState devices,
      Shared shared,
      Consumer<BackendException> failed) {
    this.name = backend.resourceName();
    this.backend = backend;
    this.devices = devices;
    this.shared = shared;
    this.reads = new SerialExecutor(shared.workers());
    this.failed = failed;
    this.sink =
        new DeviceSink() {
          @Override
          public void publish(List<Device> snapshot) {
            Objects.requireNonNull(snapshot, "snapshot");
            if (!closed) {
              listed = true;
              synchronized (order) {
                pushes++;
                devices.publish(snapshot);
              }
            }
          }

          @Override
          public void rescan() {
            Discovery.this.rescan();
          }
        };
  }

  /**
   * Starts the backend and loads the first list, on the caller's thread; then polls if the backend
   * asks for it. Throws a {@link BackendException} when the backend's {@code start} fails.
   */
  void start() {
    try {
      backend.start(sink);
    } catch (Exception e) {
      throw new BackendException(
          "start", "the backend of " + name + " failed to start: " + Loggers.describe(e), e);
    }
    try {
      devices.applyNow(read());
    } catch (Exception e) {
      backendFailed(e);
      devices.applyNow(List.of());
    }
    Duration poll = backend.pollInterval();
    if (poll != null && poll.compareTo(Duration.ZERO) > 0) {
      long nanos = poll.toNanos();
      shared.timer().scheduleWithFixedDelay(this::rescan, nanos, nanos, TimeUnit.NANOSECONDS);
    }
  }

  /** Asks for a call of the backend's {@code devices()} soon; repeated requests coalesce. */
  void rescan() {
    if (closed || !rescanQueued.compareAndSet(false, true)) {
      return;
    }
    reads.execute(
        () -> {
          rescanQueued.set(false);
          if (closed) {
            return;
          }
          try {
            long pushed;
            synchronized (order) {
              pushed = pushes;
            }
            List<Device> list = read();
            synchronized (order) {
              if (pushes == pushed) {
                devices.publish(list);
              } else {
                LOG.debug("{}: a list read by a rescan was overtaken by a push; dropped", name);
              }
            }
          } catch (Exception e) {
            backendFailed(e);
          }
        });
  }

  /** Where the backend's {@code devices()} runs: a wedged call blocks it. */
  java.util.concurrent.Executor reads() {
    return reads;
  }

  /** No more reads or publications. */
  void close() {
    closed = true;
  }

  /** Stops the backend; a failure is logged. */
  void stopBackend() {
    try {
      backend.stop();
    } catch (RuntimeException e) {
      LOG.warn("The backend of {} failed to stop cleanly", name, e);
    }
  }

  private List<Device> read() throws Exception {
    Observers observers = shared.observers();
    long start = observers.enabled() ? System.nanoTime() : 0;
    List<Device> list;
    try {
      list = backend.devices();
      if (list == null) {
        throw new IllegalStateException("devices() returned null");
      }
    } catch (Exception | Error e) {
      if (observers.enabled()) {
        observers.discovery(
            new PluginObserver.Discovery(
                name, false, Loggers.describe(e), 0, System.nanoTime() - start));
      }
      throw e;
    }
    listed = true;
    if (observers.enabled()) {
      observers.discovery(
          new PluginObserver.Discovery(name, true, "", list.size(), System.nanoTime() - start));
    }
    return list;
  }

  private void backendFailed(Exception e) {
    BackendException error =
        new BackendException(
            "devices",
            "the backend of "
                + name
                + " failed in devices(): "
                + Loggers.describe(e)
                + (listed
                    ? "; the last good device list stays"
                    : "; no device list yet: the kubelet sees no devices until devices()"
                        + " succeeds"),
            e);
    log.warn(error.getMessage(), e);
    failed.accept(error);
  }
}
