package io.github.deviceplugin4j.dra;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.internal.Threads;
import io.github.deviceplugin4j.core.internal.engine.StopSignals;
import io.github.deviceplugin4j.core.internal.registration.DirectoryWatcher;
import io.github.deviceplugin4j.core.internal.registration.WatcherRegistrationService;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import io.github.deviceplugin4j.core.internal.transport.TransportLogs;
import io.github.deviceplugin4j.core.internal.transport.UdsServer;
import io.github.deviceplugin4j.dra.internal.ClaimCheckpoint;
import io.github.deviceplugin4j.dra.internal.ClaimLock;
import io.github.deviceplugin4j.dra.internal.ClaimService;
import io.github.deviceplugin4j.dra.internal.DraPluginServices;
import io.github.deviceplugin4j.dra.internal.HealthHub;
import io.github.deviceplugin4j.dra.internal.PreparedClaim;
import io.grpc.ServerServiceDefinition;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link DraDriver} as the kubelet's DRA plugin: serves the DRAPlugin service (v1 and
 * v1beta1) and, when the driver is a {@link DraHealthReporter}, the DRAResourceHealth service (v1
 * and v1alpha1) on the driver's socket, and registers it through the kubelet's plugin watcher.
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *   DraPluginHost.builder("fpga.example.com", new FpgaDriver()).run();
 * }
 * }</pre>
 *
 * <p>What the host guarantees: every claim of a kubelet request gets its own answer; claims are
 * prepared and unprepared one at a time, across processes too (a file lock in the plugin
 * directory); what was prepared is checkpointed atomically in the plugin directory, so a repeated
 * prepare is answered without calling the driver and a restarted plugin can unprepare what an
 * earlier one prepared; sockets are {@code 0600} and never exist with looser permissions; the DRA
 * socket is served before the registration socket appears; a deleted socket (the kubelet cleans
 * {@code plugins_registry} when it restarts) is created again at once. With {@link
 * Builder#rollingUpdate(String)} two instances (old and new pod) share the plugin directory with
 * sockets named after their pod. Closing removes this instance's sockets and no others.
 */
public final class DraPluginHost implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DraPluginHost.class);

  private static final Duration EXIT_FALLBACK = Duration.ofSeconds(5);

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private final String driverName;
  private final DraDriver driver;
  private final AutoCloseable owned;
  private final Path draSocket;
  private final Path registrationSocket;
  private final Set<PosixFilePermission> permissions;
  private final EventLoopGroup group;
  private final ExecutorService claimExecutor;
  private final ScheduledExecutorService timer;
  private final ClaimService claims;
  private final HealthHub health;
  private final WatcherRegistrationService registration;
  private volatile boolean registered;
  private final List<ServerServiceDefinition> draServices;
  private final List<UdsServer> retired = new ArrayList<>();
  private final CountDownLatch closedLatch = new CountDownLatch(1);
  private UdsServer draServer; // guarded by this
  private UdsServer registrationServer; // guarded by this
  private DirectoryWatcher watcher;
  private boolean closed; // guarded by this

  private DraPluginHost(Builder b, Path pluginDir, Path registryDir) {
    this.driverName = b.driverName;
    this.driver = b.driver;
    this.owned = b.owned;
    String suffix = b.podUid == null ? "" : "-" + b.podUid;
    this.draSocket = pluginDir.resolve("dra" + suffix + ".sock");
    this.registrationSocket = registryDir.resolve(driverName + suffix + "-reg.sock");
    this.permissions = b.permissions;
    TransportLogs.install(); // before Netty's classes take their loggers
    this.group =
        new MultiThreadIoEventLoopGroup(
            1, Threads.factory("dra-eventloop", false), NioIoHandler.newFactory());
    this.claimExecutor = Executors.newSingleThreadExecutor(Threads.factory("dra-claims", true));
    this.timer = Executors.newSingleThreadScheduledExecutor(Threads.factory("dra-timer", true));
    this.claims =
        new ClaimService(driver, new ClaimLock(pluginDir), new ClaimCheckpoint(pluginDir));
    boolean reportsHealth = driver instanceof DraHealthReporter;
    this.health = new HealthHub(reportsHealth, timer, b.healthResendInterval);
    List<String> services = new ArrayList<>(DraNames.SERVICES);
    if (reportsHealth) {
      services.addAll(DraNames.HEALTH_SERVICES);
    }
    PluginInfo info =
        PluginInfo.newBuilder()
            .setType(DraNames.PLUGIN_TYPE)
            .setName(driverName)
            .setEndpoint(draSocket.toAbsolutePath().toString())
            .addAllSupportedVersions(services)
            .build();
    this.registration = new WatcherRegistrationService(info, () -> {}, this::registrationStatus);
    List<ServerServiceDefinition> defs =
        new ArrayList<>(new DraPluginServices(claims, claimExecutor).definitions());
    defs.addAll(health.definitions());
    this.draServices = List.copyOf(defs);
  }

  /**
   * A builder for a driver.
   *
   * @param driverName the DRA driver's name, a DNS subdomain such as {@code fpga.example.com}: the
   *     name in the DeviceClasses and ResourceSlices
   * @param driver the vendor's driver
   * @return the builder
   */
  public static Builder builder(String driverName, DraDriver driver) {
    return new Builder(driverName, driver);
  }

  private void startServing() throws IOException {
    if (driver instanceof DraHealthReporter reporter) {
      try {
        reporter.startHealth(health);
      } catch (Exception e) {
        throw new ConfigurationException(
            "the driver's health reporting of " + driverName + " failed to start: " + e, e);
      }
    }
    // Watching before the sockets exist, so a deletion right after they are served is seen.
    watcher =
        DirectoryWatcher.prepare(
            List.of(draSocket.getParent(), registrationSocket.getParent()),
            new DirectoryWatcher.Listener() {
              @Override
              public void created(Path dir, String name) {}

              @Override
              public void deleted(Path dir, String name) {
                if (dir.resolve(name).equals(draSocket)
                    || dir.resolve(name).equals(registrationSocket)) {
                  ensureServing();
                }
              }

              @Override
              public void rescan(Path dir) {
                ensureServing();
              }
            },
            Duration.ofSeconds(5));
    synchronized (this) {
      // The DRA socket first: the kubelet connects to it as soon as it sees the registration.
      draServer = UdsServer.start(draSocket, permissions, draServices, group, null);
      registrationServer =
          UdsServer.start(
              registrationSocket, permissions, List.of(registration.bindService()), group, null);
    }
    watcher.start();
    timer.scheduleWithFixedDelay(this::ensureServing, 10, 10, TimeUnit.SECONDS);
    LOG.info(
        "DRA driver {} serving {} and registering through {}",
        driverName,
        draSocket,
        registrationSocket);
  }

  /** The kubelet's verdict on the registration, logged with its error when it refused. */
  private void registrationStatus(boolean ok, String error) {
    registered = ok;
    if (ok) {
      LOG.info("The kubelet registered DRA driver {} at {}", driverName, draSocket);
    } else {
      LOG.error("The kubelet refused DRA driver {}: {}", driverName, error);
    }
  }

  /** Creates a socket again when it was deleted or replaced; the old server keeps its calls. */
  private synchronized void ensureServing() {
    if (closed) {
      return;
    }
    try {
      boolean draReplaced = false;
      if (!draServer.stillOurs()) {
        LOG.warn("DRA socket {} was deleted or replaced; serving it again", draSocket);
        UdsServer old = draServer;
        draServer = UdsServer.start(draSocket, permissions, draServices, group, null);
        old.retire();
        retired.add(old);
        draReplaced = true;
      }
      if (draReplaced || !registrationServer.stillOurs()) {
        LOG.info("Registration socket {} is gone; creating it again", registrationSocket);
        UdsServer old = registrationServer;
        registrationServer =
            UdsServer.start(
                registrationSocket,
                permissions,
                List.of(registration.bindService()),
                group,
                old.stillOurs() ? old.identity() : null);
        old.retire();
        retired.add(old);
      }
    } catch (IOException | RuntimeException e) {
      LOG.error("Could not serve DRA driver {} again (will retry): {}", driverName, e.toString());
    }
  }

  /**
   * The driver's name.
   *
   * @return the name it registers with
   */
  public String driverName() {
    return driverName;
  }

  /**
   * The DRA socket the kubelet calls.
   *
   * @return its absolute path
   */
  public Path draSocket() {
    return draSocket;
  }

  /**
   * The registration socket in the kubelet's plugin registry directory.
   *
   * @return its path
   */
  public Path registrationSocket() {
    return registrationSocket;
  }

  /**
   * Whether the kubelet said it registered the driver, the last time it said anything.
   *
   * @return true once registered
   */
  public boolean isRegistered() {
    return registered;
  }

  /**
   * The claims prepared and not unprepared, by this or an earlier instance, from the checkpoint.
   *
   * @return the claims by UID, each with its devices
   */
  public Map<String, List<PreparedDevice>> preparedClaims() {
    try {
      Map<String, List<PreparedDevice>> out = new java.util.LinkedHashMap<>();
      for (Map.Entry<String, PreparedClaim> e : claims.prepared().entrySet()) {
        out.put(e.getKey(), e.getValue().devices());
      }
      return out;
    } catch (IOException e) {
      throw new ConfigurationException(e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading the checkpoint", e);
    }
  }

  /**
   * Stops serving and removes this instance's sockets (only if they are still its own). Idempotent.
   */
  @Override
  public void close() {
    List<UdsServer> servers = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      // Registration first: the kubelet stops using a driver whose registration socket is gone.
      if (registrationServer != null) {
        servers.add(registrationServer);
      }
      if (draServer != null) {
        servers.add(draServer);
      }
      servers.addAll(retired);
    }
    if (watcher != null) {
      watcher.close();
    }
    health.close();
    if (driver instanceof DraHealthReporter reporter) {
      try {
        reporter.stopHealth();
      } catch (RuntimeException e) {
        LOG.warn("The driver's stopHealth failed", e);
      }
    }
    for (UdsServer s : servers) {
      s.close(2000);
    }
    timer.shutdownNow();
    claimExecutor.shutdown();
    try {
      claimExecutor.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    if (owned != null) {
      try {
        owned.close();
      } catch (Exception e) {
        LOG.warn("The driver of {} failed to stop cleanly", driverName, e);
      }
    }
    closedLatch.countDown();
    LOG.info("DRA driver {} stopped", driverName);
  }

  /**
   * Blocks until {@link #close()} ran.
   *
   * @throws InterruptedException when interrupted
   */
  public void awaitClose() throws InterruptedException {
    closedLatch.await();
  }

  /** Starts a driver the host owns, before the host serves anything. */
  @FunctionalInterface
  interface Starter {
    /** Starts the driver; a RuntimeException stops the host's start. */
    void start();
  }

  /** Configures and starts a {@link DraPluginHost}. */
  public static final class Builder {
    private final String driverName;
    private final DraDriver driver;
    private Starter starter;
    private AutoCloseable owned;
    private Path pluginDir;
    private Path registryDir = DraNames.DEFAULT_REGISTRY_DIR;
    private String podUid;
    private Set<PosixFilePermission> permissions = PosixFilePermissions.fromString("rw-------");
    private Duration healthResendInterval;

    private Builder(String driverName, DraDriver driver) {
      this.driverName = Objects.requireNonNull(driverName, "driverName");
      this.driver = Objects.requireNonNull(driver, "driver");
    }

    /**
     * Makes the host own the driver's lifecycle: {@code start} runs before anything is served (a
     * failure stops the start) and {@code owned} is closed after the host stopped serving.
     */
    Builder owning(Starter start, AutoCloseable ownedDriver) {
      this.starter = Objects.requireNonNull(start, "start");
      this.owned = Objects.requireNonNull(ownedDriver, "ownedDriver");
      return this;
    }

    /**
     * The plugin directory: the DRA socket, the claim checkpoint and the lock file live here. It
     * must be the same path inside and outside the driver's container, and used by this driver
     * only. Default {@code /var/lib/kubelet/plugins/<driver>/}.
     *
     * @param dir the directory; created if missing
     * @return this builder
     */
    public Builder pluginDir(Path dir) {
      this.pluginDir = Objects.requireNonNull(dir, "dir");
      return this;
    }

    /**
     * The kubelet's plugin registry directory. Default {@code /var/lib/kubelet/plugins_registry}.
     *
     * @param dir the directory
     * @return this builder
     */
    public Builder registryDir(Path dir) {
      this.registryDir = Objects.requireNonNull(dir, "dir");
      return this;
    }

    /**
     * Lets two instances (the old and the new pod of a DaemonSet update) run side by side: their
     * sockets carry the pod's UID ({@code dra-<uid>.sock}, {@code <driver>-<uid>-reg.sock}), and
     * they share the checkpoint under the lock. Pass the pod UID through the downward API. Needs a
     * kubelet of 1.33 or newer. Each pod must stop cleanly (SIGTERM) so that its sockets go.
     *
     * @param podUid the pod's UID
     * @return this builder
     */
    public Builder rollingUpdate(String podUid) {
      Objects.requireNonNull(podUid, "podUid");
      if (podUid.isEmpty() || podUid.contains("/")) {
        throw new ConfigurationException(
            "rollingUpdate needs the pod UID (from the downward API: metadata.uid), got '"
                + podUid
                + "'");
      }
      this.podUid = podUid;
      return this;
    }

    /**
     * The permissions of both sockets. Default {@code rw-------}.
     *
     * @param permissions the permissions
     * @return this builder
     */
    public Builder socketPermissions(Set<PosixFilePermission> permissions) {
      this.permissions = Set.copyOf(permissions);
      return this;
    }

    /**
     * How often the last health list is sent again to the kubelet. Default: half the smallest
     * health check timeout of the list (the kubelet's 30 s for devices without one).
     *
     * @param interval the interval
     * @return this builder
     */
    public Builder healthResendInterval(Duration interval) {
      if (interval.isNegative() || interval.isZero()) {
        throw new ConfigurationException("healthResendInterval must be positive, got " + interval);
      }
      this.healthResendInterval = interval;
      return this;
    }

    /**
     * Checks the configuration, reads the checkpoint, serves the DRA socket, then the registration
     * socket.
     *
     * @return the running host
     * @throws ConfigurationException naming what is wrong: the driver name, a directory, a socket
     *     path over the Unix limit, a corrupt checkpoint, another live instance on the same sockets
     */
    public DraPluginHost start() {
      if (driverName.length() > 253 || !DNS_SUBDOMAIN.matcher(driverName).matches()) {
        throw new ConfigurationException(
            "DRA driver name '"
                + driverName
                + "' is not a DNS subdomain: use lower-case letters, digits, '-' and '.', such as"
                + " fpga.example.com");
      }
      Path plugins =
          (pluginDir != null ? pluginDir : DraNames.DEFAULT_PLUGINS_DIR.resolve(driverName))
              .toAbsolutePath()
              .normalize();
      Path registry = registryDir.toAbsolutePath().normalize();
      for (Path dir : List.of(plugins, registry)) {
        try {
          Files.createDirectories(dir);
        } catch (IOException e) {
          throw new ConfigurationException(
              "cannot create directory " + dir + ": " + e.getMessage(), e);
        }
      }
      if (starter != null) {
        starter.start();
      }
      DraPluginHost host;
      try {
        host = new DraPluginHost(this, plugins, registry);
      } catch (RuntimeException e) {
        closeOwned();
        throw e;
      }
      for (Path socket : List.of(host.draSocket, host.registrationSocket)) {
        int bytes =
            Math.max(
                SocketFiles.pathBytes(socket),
                SocketFiles.pathBytes(socket.getParent()) + UdsServer.PRIVATE_PATH_EXTRA);
        if (bytes > SocketFiles.MAX_PATH_BYTES) {
          host.close();
          throw new ConfigurationException(
              "socket path "
                  + socket
                  + " is too long for a Unix socket ("
                  + bytes
                  + " bytes with the temporary bind path, at most "
                  + SocketFiles.MAX_PATH_BYTES
                  + "): use a shorter directory");
        }
      }
      try {
        host.claims.prepared(); // a corrupt checkpoint stops the start, with what to do
        host.startServing();
      } catch (IOException e) {
        host.close();
        throw new ConfigurationException(e.getMessage(), e);
      } catch (InterruptedException e) {
        host.close();
        Thread.currentThread().interrupt();
        throw new ConfigurationException("interrupted while starting", e);
      } catch (RuntimeException e) {
        host.close();
        throw e;
      }
      return host;
    }

    private void closeOwned() {
      if (owned == null) {
        return;
      }
      try {
        owned.close();
      } catch (Exception e) {
        LOG.warn("The driver of {} failed to stop cleanly", driverName, e);
      }
    }

    /**
     * Starts the host and blocks until SIGTERM or SIGINT (or an interrupt), then closes it,
     * removing this instance's sockets, and returns: a {@code main} that ends after it exits with
     * status 0.
     *
     * @throws ConfigurationException when the configuration is invalid
     */
    public void run() {
      AtomicReference<DraPluginHost> running = new AtomicReference<>();
      StopSignals signals =
          StopSignals.install(
              () -> {
                LOG.info("Stop signal received; stopping");
                DraPluginHost h = running.get();
                if (h != null) {
                  h.close();
                }
              });
      DraPluginHost host;
      try {
        host = start();
      } catch (RuntimeException e) {
        signals.restore(EXIT_FALLBACK);
        throw e;
      }
      running.set(host);
      if (signals.received()) {
        host.close();
      }
      Thread hook = new Thread(host::close, Threads.PREFIX + "dra-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        host.awaitClose();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        host.close();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // the JVM is stopping
        }
        signals.restore(EXIT_FALLBACK);
      }
    }
  }
}
