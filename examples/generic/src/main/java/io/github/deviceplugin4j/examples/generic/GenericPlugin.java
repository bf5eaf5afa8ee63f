package io.github.deviceplugin4j.examples.generic;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ProbeResult;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.generic.GenericConfig.ConfigException;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Resource;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The generic device plugin: serves the resources of a configuration file ({@link GenericConfig})
 * and follows the file. Each resource runs in its own {@link DevicePluginHost}, so a change touches
 * only the resources it changes: a resource whose groups changed keeps its registration and sends
 * its new device list; a new one registers; one whose name or sharing changed registers again; one
 * no longer listed stops. A file that cannot be read or parsed is refused and logged with the key
 * that is wrong, and the resources of the last good file keep serving.
 *
 * <p>{@code java -jar deviceplugin4j-example-generic.jar --config=/etc/generic/config.yaml
 * --root=/host}; the command line is {@link GenericPluginCommand}'s.
 */
public final class GenericPlugin implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(GenericPlugin.class);

  private final Path root;
  private final Duration pollInterval;
  private final Consumer<DevicePluginHost.Builder> hostSettings;
  private final Map<String, Served> served = new LinkedHashMap<>();
  private ConfigFollower follower;
  private boolean closed;

  /** One resource being served. */
  private record Served(Resource resource, GenericBackend backend, DevicePluginHost host) {}

  private GenericPlugin(
      Path root, Duration pollInterval, Consumer<DevicePluginHost.Builder> hostSettings) {
    this.root = root;
    this.pollInterval = pollInterval;
    this.hostSettings = hostSettings;
  }

  /**
   * Reads the configuration, serves its resources and starts following the file.
   *
   * @param configFile the YAML or JSON file
   * @param root the directory holding {@code sys/} and {@code dev/} ({@code /} on a node)
   * @param pollInterval how often each resource's devices are read again
   * @param hostSettings applied to each resource's host builder before its backend (plugin
   *     directory, registration mode, listeners); may do nothing
   * @return the running plugin
   * @throws ConfigException when the first configuration is unusable: nothing is served then
   * @throws IOException when the file cannot be read or its directory watched
   */
  public static GenericPlugin start(
      Path configFile,
      Path root,
      Duration pollInterval,
      Consumer<DevicePluginHost.Builder> hostSettings)
      throws ConfigException, IOException {
    GenericPlugin plugin =
        new GenericPlugin(
            Objects.requireNonNull(root, "root"),
            Objects.requireNonNull(pollInterval, "pollInterval"),
            Objects.requireNonNull(hostSettings, "hostSettings"));
    try {
      ConfigFollower follower = ConfigFollower.start(configFile, pollInterval, plugin::apply);
      synchronized (plugin) {
        plugin.follower = follower;
      }
    } catch (ConfigException | IOException | RuntimeException e) {
      plugin.close();
      throw e;
    }
    return plugin;
  }

  /**
   * Reads the file again and applies it when it changed. A file that cannot be read or parsed is
   * logged and refused; the resources served keep serving.
   *
   * @return true when a new configuration was applied
   */
  public boolean reload() {
    return follower.reload();
  }

  /** Starts, updates and stops hosts so that they serve {@code config}. */
  private synchronized void apply(GenericConfig config) {
    if (closed) {
      throw new IllegalStateException("the plugin is closed");
    }
    Map<String, Resource> wanted = new LinkedHashMap<>();
    config.resources().forEach(r -> wanted.put(r.name(), r));
    for (String name : new ArrayList<>(served.keySet())) {
      Resource next = wanted.get(name);
      Served s = served.get(name);
      if (next == null || !next.sharing().equals(s.resource().sharing())) {
        log.info(
            "Stopping {}: {}", name, next == null ? "no longer configured" : "sharing changed");
        s.host().close();
        served.remove(name);
      }
    }
    for (Resource r : wanted.values()) {
      Served s = served.get(r.name());
      if (s == null) {
        GenericBackend backend = new GenericBackend(r, root, pollInterval);
        DevicePluginHost.Builder b = DevicePluginHost.builder();
        hostSettings.accept(b);
        DevicePluginHost host = b.backend(backend, r.sharing()).start();
        served.put(r.name(), new Served(r, backend, host));
      } else if (!s.resource().equals(r)) {
        s.backend().update(r);
        served.put(r.name(), new Served(r, s.backend(), s.host()));
      }
    }
  }

  /**
   * The configuration being served.
   *
   * @return the last good configuration
   */
  public GenericConfig config() {
    return follower.config();
  }

  /**
   * Why the last change of the file was refused.
   *
   * @return the problem, naming the key; empty after a good file
   */
  public String lastError() {
    return follower.lastError();
  }

  /**
   * The host of each resource served, by the backend's resource name.
   *
   * @return a copy
   */
  public synchronized Map<String, DevicePluginHost> hosts() {
    Map<String, DevicePluginHost> out = new LinkedHashMap<>();
    served.forEach((name, s) -> out.put(name, s.host()));
    return out;
  }

  /**
   * Whether every resource is registered with the kubelet.
   *
   * @return true when all are
   */
  public synchronized boolean isReady() {
    return served.values().stream().allMatch(s -> s.host().isReady());
  }

  /**
   * Whether every resource's host still works, for {@code /healthz}: each host's control loops and
   * event loop run a trivial task within the bound.
   *
   * @param bound how long each loop may take
   * @return passed, or the problems of every host
   */
  public ProbeResult liveness(Duration bound) {
    List<String> problems = new ArrayList<>();
    hosts().values().forEach(h -> problems.addAll(h.liveness(bound).problems()));
    return ProbeResult.of(problems);
  }

  /**
   * Whether every resource is registered with the kubelet, for {@code /readyz}.
   *
   * @return passed, or the resources that are not
   */
  public ProbeResult readiness() {
    List<String> problems = new ArrayList<>();
    hosts().values().forEach(h -> problems.addAll(h.readiness().problems()));
    return ProbeResult.of(problems);
  }

  /** Reads every resource's devices again now, without waiting for the poll interval. */
  public synchronized void rescan() {
    served.values().forEach(s -> s.backend().rescan());
  }

  /** Stops following the file and stops every host. */
  @Override
  public void close() {
    ConfigFollower f;
    synchronized (this) {
      f = follower;
    }
    if (f != null) {
      f.close();
    }
    synchronized (this) {
      closed = true;
      served.values().forEach(s -> s.host().close());
      served.clear();
    }
  }

  /**
   * Serves a configuration file until SIGTERM; see {@code --help} and {@link GenericPluginCommand}.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(
        PluginCli.execute(
            new GenericPluginCommand(), GenericPluginCommand.defaults(System.getenv()), args));
  }

  /**
   * Blocks until SIGTERM or SIGINT, then closes {@code service}: its sockets are removed and main
   * returns, so the process exits with 0 as Kubernetes expects of a clean stop; a shutdown hook
   * covers other exits.
   *
   * @param service what to close
   * @throws InterruptedException when interrupted while waiting
   */
  public static void awaitStopSignal(AutoCloseable service) throws InterruptedException {
    java.util.concurrent.CountDownLatch stop = new java.util.concurrent.CountDownLatch(1);
    for (String name : List.of("TERM", "INT")) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), s -> stop.countDown());
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> closeQuietly(service), "shutdown"));
    stop.await();
    log.info("Stop signal received; stopping");
    closeQuietly(service);
  }

  private static void closeQuietly(AutoCloseable service) {
    try {
      service.close();
    } catch (Exception e) {
      log.warn("Stopping failed", e);
    }
  }
}
