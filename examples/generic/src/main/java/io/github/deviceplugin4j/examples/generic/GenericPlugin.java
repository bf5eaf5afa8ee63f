package io.github.deviceplugin4j.examples.generic;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.examples.generic.GenericConfig.ConfigException;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Resource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
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
 * --root=/host}
 */
public final class GenericPlugin implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(GenericPlugin.class);

  /** How long the config directory must be quiet after a change before the file is read. */
  static final Duration QUIET = Duration.ofMillis(200);

  private final Path configFile;
  private final Path root;
  private final Duration pollInterval;
  private final Consumer<DevicePluginHost.Builder> hostSettings;
  private final Map<String, Served> served = new LinkedHashMap<>();
  private final WatchService watcher;
  private final Thread watchThread;
  private String lastText;
  private volatile GenericConfig current;
  private volatile String lastError = "";
  private volatile boolean closed;

  /** One resource being served. */
  private record Served(Resource resource, GenericBackend backend, DevicePluginHost host) {}

  private GenericPlugin(
      Path configFile,
      Path root,
      Duration pollInterval,
      Consumer<DevicePluginHost.Builder> hostSettings)
      throws IOException {
    this.configFile = configFile.toAbsolutePath();
    this.root = root;
    this.pollInterval = pollInterval;
    this.hostSettings = hostSettings;
    this.watcher = FileSystems.getDefault().newWatchService();
    // The directory, not the file: editors and ConfigMap updates replace the file (a symlink swap).
    this.configFile
        .getParent()
        .register(
            watcher,
            StandardWatchEventKinds.ENTRY_CREATE,
            StandardWatchEventKinds.ENTRY_MODIFY,
            StandardWatchEventKinds.ENTRY_DELETE);
    this.watchThread = new Thread(this::watch, "generic-config-watch");
    this.watchThread.setDaemon(true);
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
            Objects.requireNonNull(configFile, "configFile"),
            Objects.requireNonNull(root, "root"),
            Objects.requireNonNull(pollInterval, "pollInterval"),
            Objects.requireNonNull(hostSettings, "hostSettings"));
    try {
      String text = Files.readString(plugin.configFile, StandardCharsets.UTF_8);
      GenericConfig config = GenericConfig.parse(text);
      synchronized (plugin) {
        plugin.apply(config);
        plugin.lastText = text;
      }
    } catch (ConfigException | IOException | RuntimeException e) {
      plugin.close();
      throw e;
    }
    plugin.watchThread.start();
    return plugin;
  }

  /**
   * Reads the file again and applies it when it changed. A file that cannot be read or parsed is
   * logged and refused; the resources served keep serving.
   *
   * @return true when a new configuration was applied
   */
  public synchronized boolean reload() {
    if (closed) {
      return false;
    }
    String text;
    try {
      text = Files.readString(configFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      refuse("cannot read " + configFile + ": " + e);
      return false;
    }
    if (text.equals(lastText)) {
      return false;
    }
    lastText = text;
    GenericConfig config;
    try {
      config = GenericConfig.parse(text);
    } catch (ConfigException e) {
      refuse(e.getMessage());
      return false;
    }
    try {
      apply(config);
    } catch (RuntimeException e) {
      refuse("cannot serve it: " + e.getMessage());
      return false;
    }
    lastError = "";
    log.info("Applied the new configuration of {}", configFile);
    return true;
  }

  private void refuse(String problem) {
    lastError = problem;
    log.error(
        "Refused the configuration in {}: {}; the previous configuration keeps serving",
        configFile,
        problem);
  }

  /** Starts, updates and stops hosts so that they serve {@code config}. */
  private void apply(GenericConfig config) {
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
    current = config;
  }

  /**
   * The configuration being served.
   *
   * @return the last good configuration
   */
  public GenericConfig config() {
    return current;
  }

  /**
   * Why the last change of the file was refused.
   *
   * @return the problem, naming the key; empty after a good file
   */
  public String lastError() {
    return lastError;
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

  /** Reads every resource's devices again now, without waiting for the poll interval. */
  public synchronized void rescan() {
    served.values().forEach(s -> s.backend().rescan());
  }

  private void watch() {
    long pollMillis = Math.max(1000, pollInterval.toMillis());
    while (!closed) {
      try {
        var key = watcher.poll(pollMillis, TimeUnit.MILLISECONDS);
        // A write in several steps (truncate, then write) gives several events: wait until the
        // directory is quiet for QUIET, so a half-written file is not read and refused.
        while (key != null) {
          key.pollEvents();
          key.reset();
          key = watcher.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS);
        }
        // Also on timeouts: a safety check for missed events.
        reload();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        log.error("Reloading {} failed; the previous configuration keeps serving", configFile, e);
      }
    }
  }

  /** Stops following the file and stops every host. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      served.values().forEach(s -> s.host().close());
      served.clear();
    }
    try {
      watcher.close();
    } catch (IOException e) {
      log.debug("closing the watch service", e);
    }
    watchThread.interrupt();
  }

  /**
   * Serves a configuration file until SIGTERM.
   *
   * @param args {@code --config=FILE} (default {@code /etc/deviceplugin4j-generic/config.yaml}),
   *     {@code --root=DIR} (default {@code /}), {@code --poll-interval=5s}
   * @throws Exception when the first configuration is unusable
   */
  public static void main(String[] args) throws Exception {
    Map<String, String> flags = new LinkedHashMap<>();
    flags.put("config", "/etc/deviceplugin4j-generic/config.yaml");
    flags.put("root", "/");
    flags.put("poll-interval", "5s");
    for (String a : args) {
      int eq = a.indexOf('=');
      String key = a.startsWith("--") && eq > 2 ? a.substring(2, eq) : null;
      if (key == null || !flags.containsKey(key)) {
        throw new IllegalArgumentException(
            "unknown argument " + a + "; known: --config=FILE, --root=DIR, --poll-interval=5s");
      }
      flags.put(key, a.substring(eq + 1));
    }
    Duration poll =
        Duration.parse("PT" + flags.get("poll-interval").toUpperCase(java.util.Locale.ROOT));
    GenericPlugin plugin =
        start(Path.of(flags.get("config")), Path.of(flags.get("root")), poll, b -> {});
    // SIGTERM and SIGINT close every host (their sockets are removed) and main returns, so the
    // process exits with 0 as Kubernetes expects of a clean stop; the hook covers other exits.
    java.util.concurrent.CountDownLatch stop = new java.util.concurrent.CountDownLatch(1);
    for (String name : List.of("TERM", "INT")) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), s -> stop.countDown());
    }
    Runtime.getRuntime().addShutdownHook(new Thread(plugin::close, "generic-shutdown"));
    stop.await();
    log.info("Stop signal received; stopping");
    plugin.close();
  }
}
