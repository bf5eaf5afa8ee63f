package io.github.deviceplugin4j.core.internal.engine;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.Sharing;
import java.time.Duration;
import java.util.List;

/**
 * A backend served under another resource name ({@code Sharing.renamed()}); everything else is the
 * wrapped backend's. Its capabilities are handed to the host separately, since this class
 * implements none.
 */
public final class RenamedBackend implements DeviceBackend {
  private final DeviceBackend backend;
  private final Sharing sharing;

  /** Wraps a backend, renamed by {@link Sharing#resourceName(String)}. */
  public RenamedBackend(DeviceBackend backend, Sharing sharing) {
    this.backend = backend;
    this.sharing = sharing;
  }

  /**
   * The wrapped backend's name, renamed; read from the backend each time, like an unwrapped one.
   */
  @Override
  public String resourceName() {
    return sharing.resourceName(backend.resourceName());
  }

  @Override
  public List<Device> devices() throws Exception {
    return backend.devices();
  }

  @Override
  public Duration pollInterval() {
    return backend.pollInterval();
  }

  @Override
  public void start(DeviceSink sink) throws Exception {
    backend.start(sink);
  }

  @Override
  public void stop() {
    backend.stop();
  }

  @Override
  public String toString() {
    return backend + " (" + sharing + ")";
  }
}
