package io.github.deviceplugin4j.examples.testing;

import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Backends served by a {@link DevicePluginHost} to a {@link FakeKubelet}, over real Unix sockets in
 * one directory, with legacy registration; {@link #close()} stops both.
 *
 * <pre>{@code
 * try (PluginUnderTest plugin = PluginUnderTest.start(tempDir, List.of(backend))) {
 *   plugin.kubelet().awaitRegistration(backend.resourceName(), PluginUnderTest.WAIT);
 *   assertThat(plugin.kubelet().allocate(backend.resourceName(), 1).problems()).isEmpty();
 * }
 * }</pre>
 */
public final class PluginUnderTest implements AutoCloseable {
  /**
   * How long a test waits for the fake kubelet to see something: generous, since only a failing
   * test waits this long and the plugin's own waits (a registration backoff capped at 10 s, the
   * kubelet's 10 s dial-back) must fit on a busy machine.
   */
  public static final Duration WAIT = Duration.ofSeconds(60);

  private final FakeKubelet kubelet;
  private final DevicePluginHost host;

  private PluginUnderTest(FakeKubelet kubelet, DevicePluginHost host) {
    this.kubelet = kubelet;
    this.host = host;
  }

  /**
   * Starts the fake kubelet on {@code <dir>/dp}, then a host serving the backends to it.
   *
   * @param dir a short directory (Unix socket paths are limited to 107 bytes), e.g. a JUnit
   *     {@code @TempDir}
   * @param backends the backends, one resource each
   * @param listeners listeners to add to the host
   * @return both, running; registration follows asynchronously
   */
  public static PluginUnderTest start(
      Path dir, List<? extends DeviceBackend> backends, PluginListener... listeners) {
    return start(dir, b -> backends.forEach(b::backend), listeners);
  }

  /**
   * Starts the fake kubelet on {@code <dir>/dp}, then a host serving what {@code backends} adds to
   * its builder (for backends given with a {@code Sharing} or {@code Capabilities}).
   *
   * @param dir a short directory (Unix socket paths are limited to 107 bytes), e.g. a JUnit
   *     {@code @TempDir}
   * @param backends adds the backends to the builder, e.g. {@code b -> b.backend(x, sharing)}
   * @param listeners listeners to add to the host
   * @return both, running; registration follows asynchronously
   */
  public static PluginUnderTest start(
      Path dir, Consumer<DevicePluginHost.Builder> backends, PluginListener... listeners) {
    FakeKubelet kubelet = FakeKubelet.start(Objects.requireNonNull(dir, "dir").resolve("dp"));
    try {
      DevicePluginHost.Builder b =
          DevicePluginHost.builder()
              .pluginDir(kubelet.pluginDir())
              .registrationMode(RegistrationMode.LEGACY);
      backends.accept(b);
      for (PluginListener l : listeners) {
        b.listener(l);
      }
      return new PluginUnderTest(kubelet, b.start());
    } catch (RuntimeException e) {
      kubelet.close();
      throw e;
    }
  }

  /**
   * The fake kubelet.
   *
   * @return the kubelet
   */
  public FakeKubelet kubelet() {
    return kubelet;
  }

  /**
   * The plugins' host; a test may close it early (closing it again is harmless).
   *
   * @return the host
   */
  public DevicePluginHost host() {
    return host;
  }

  /** Closes the host, then the kubelet. */
  @Override
  public void close() {
    try {
      host.close();
    } finally {
      kubelet.close();
    }
  }

  /**
   * The IDs of the unhealthy devices of a list the kubelet holds.
   *
   * @param devices e.g. from {@link FakeKubelet#awaitDevices}
   * @return their IDs, sorted
   */
  public static Set<String> unhealthy(List<DeviceState> devices) {
    Set<String> ids = new TreeSet<>();
    devices.stream().filter(d -> !d.healthy()).map(DeviceState::id).forEach(ids::add);
    return ids;
  }
}
