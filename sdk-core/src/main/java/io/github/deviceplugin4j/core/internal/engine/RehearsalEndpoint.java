package io.github.deviceplugin4j.core.internal.engine;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.requests.PluginEndpoint;
import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import io.github.deviceplugin4j.core.internal.state.Snapshot;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A resource as the start-up warm-up serves it on its private socket: the resource's name and
 * request path, and a device state of its own, a copy of the resource's healthy devices, for the
 * rehearsed {@code ListAndWatch}. A stream on it, and its end, are seen by nothing of the real
 * resource (its stream count, its re-registration on a missing stream, its observers); only healthy
 * devices, so that the copy logs no health change either. Closed after the warm-up.
 */
final class RehearsalEndpoint implements PluginEndpoint, AutoCloseable {

  private final PluginEndpoint plugin;
  private final DeviceState devices;

  RehearsalEndpoint(PluginEndpoint plugin, EngineConfig config, ScheduledExecutorService timer) {
    this.plugin = plugin;
    this.devices =
        new DeviceState(
            config.adapters(),
            Runnable::run,
            timer,
            Duration.ZERO,
            config.maxMessageBytes(),
            NO_EVENTS,
            plugin.resourceName(),
            Observers.NONE,
            null);
    devices.applyNow(
        plugin.devices().current().physical().stream().filter(Device::isHealthy).toList());
  }

  @Override
  public String resourceName() {
    return plugin.resourceName();
  }

  @Override
  public DeviceState devices() {
    return devices;
  }

  @Override
  public RequestHandler requests() {
    return plugin.requests();
  }

  @Override
  public void close() {
    devices.close();
  }

  private static final DeviceState.Events NO_EVENTS =
      new DeviceState.Events() {
        @Override
        public void invalidDevices(InvalidBackendDataException error) {}

        @Override
        public void tooLarge(InvalidBackendDataException error) {}

        @Override
        public void changed(Snapshot snapshot) {}

        @Override
        public void streamsGone() {}
      };
}
