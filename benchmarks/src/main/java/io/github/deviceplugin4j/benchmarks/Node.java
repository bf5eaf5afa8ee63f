package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A simulated node in the harness JVM: the fake kubelet and the plugins under test, SDK and
 * baseline, each registered and listing its devices before a scenario measures.
 */
public final class Node implements AutoCloseable {

  /** How long setup steps may take. */
  public static final Duration SETUP = Duration.ofSeconds(30);

  private final FakeKubelet kubelet;
  private final List<AutoCloseable> plugins = new ArrayList<>();

  /**
   * A node with a fake kubelet in legacy mode.
   *
   * @param dir the plugin directory
   */
  public Node(Path dir) {
    this.kubelet = FakeKubelet.start(dir);
  }

  private Node(FakeKubelet kubelet) {
    this.kubelet = kubelet;
  }

  /**
   * A node around a fake kubelet built by the caller.
   *
   * @param kubelet a started fake kubelet
   * @return the node
   */
  public static Node of(FakeKubelet kubelet) {
    return new Node(kubelet);
  }

  /**
   * The fake kubelet.
   *
   * @return it
   */
  public FakeKubelet kubelet() {
    return kubelet;
  }

  /**
   * Starts an SDK host for backends (legacy registration) and waits until each lists its devices.
   *
   * @param backends the backends
   * @param devices how many devices each lists
   * @return the host
   */
  public DevicePluginHost sdk(int devices, DeviceBackend... backends) {
    return sdk(devices, b -> {}, backends);
  }

  /**
   * Starts an SDK host for backends (legacy registration) with more settings, e.g. an observer, and
   * waits until each lists its devices.
   *
   * @param devices how many devices each lists
   * @param settings applied to the builder before it starts
   * @param backends the backends
   * @return the host
   */
  public DevicePluginHost sdk(
      int devices,
      java.util.function.Consumer<DevicePluginHost.Builder> settings,
      DeviceBackend... backends) {
    DevicePluginHost.Builder b =
        DevicePluginHost.builder()
            .pluginDir(kubelet.pluginDir())
            .registrationMode(RegistrationMode.LEGACY);
    settings.accept(b);
    for (DeviceBackend backend : backends) {
      b.backend(backend);
    }
    DevicePluginHost host = b.start();
    plugins.add(host);
    for (DeviceBackend backend : backends) {
      awaitListed(backend.resourceName(), devices);
    }
    return host;
  }

  /**
   * Starts and registers a baseline plugin with devices {@code dev-0 ...}.
   *
   * @param resource resource name
   * @param devices how many devices
   * @return the plugin
   * @throws Exception when it cannot serve
   */
  public BaselinePlugin baseline(String resource, int devices) throws Exception {
    List<String> ids =
        BenchBackend.devices(devices, Health.HEALTHY).stream().map(Device::id).toList();
    String sock = "base-" + resource.substring(resource.indexOf('/') + 1) + ".sock";
    BaselinePlugin p = new BaselinePlugin(resource, kubelet.pluginDir().resolve(sock), ids).start();
    plugins.add(p);
    p.register(kubelet.kubeletSocket());
    awaitListed(resource, devices);
    return p;
  }

  /**
   * Waits until the kubelet lists a resource's devices.
   *
   * @param resource resource name
   * @param devices how many
   */
  public void awaitListed(String resource, int devices) {
    kubelet.awaitDevices(resource, l -> l.size() == devices, SETUP);
  }

  /**
   * A blocking stub on the kubelet's own connection to a resource's plugin.
   *
   * @param resource resource name
   * @return the stub
   */
  public DevicePluginGrpc.DevicePluginBlockingStub stub(String resource) {
    return DevicePluginGrpc.newBlockingStub(
        kubelet
            .pluginChannel(resource)
            .orElseThrow(() -> new IllegalStateException(resource + " is not connected")));
  }

  @Override
  public void close() throws Exception {
    for (int i = plugins.size() - 1; i >= 0; i--) {
      plugins.get(i).close();
    }
    kubelet.close();
  }
}
