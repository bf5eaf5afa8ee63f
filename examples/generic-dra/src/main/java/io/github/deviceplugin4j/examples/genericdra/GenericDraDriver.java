package io.github.deviceplugin4j.examples.genericdra;

import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.generic.ConfigFollower;
import io.github.deviceplugin4j.examples.generic.GenericConfig.ConfigException;
import io.github.deviceplugin4j.examples.generic.GenericPlugin;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The generic plugin's configuration served as a DRA (Dynamic Resource Allocation) driver: every
 * device of every group is a device of this node's pool ({@link GenericDraBackend}), with its
 * resource and sysfs facts as attributes; preparing a claim writes one CDI spec giving the
 * container each device's nodes, mounts, environment and CDI names as the group says. The file is
 * followed as in device plugin mode ({@link ConfigFollower}): a good change republishes the slices,
 * a bad one is refused naming its key and the last good one keeps serving.
 *
 * <p>{@code java -jar deviceplugin4j-example-generic-dra.jar --dra --config=FILE --root=/host}.
 * Without {@code --dra} this jar runs the device plugin ({@link GenericPlugin}) with the same
 * flags, so one image serves both modes. Flags under {@code --dra}: {@code --config} (default
 * {@code /etc/deviceplugin4j-generic/config.yaml}), {@code --root} ({@code /}), {@code
 * --poll-interval} ({@code 5s}), {@code --driver-name} ({@value #DEFAULT_DRIVER_NAME}), {@code
 * --node-name} ({@code NODE_NAME}), {@code --plugin-dir} ({@code
 * /var/lib/kubelet/plugins/<driver>}), {@code --registry-dir} ({@code
 * /var/lib/kubelet/plugins_registry}), {@code --cdi-dir} ({@code /var/run/cdi}), {@code --pod-uid}
 * ({@code POD_UID}; sockets carry it so old and new pods overlap during a rolling update).
 */
public final class GenericDraDriver implements AutoCloseable {

  /** The driver name used when none is given. */
  public static final String DEFAULT_DRIVER_NAME = "generic.example.com";

  /** The CDI class of the claims' specs: CDI device names read {@code <driver>/device=...}. */
  public static final String CDI_CLASS = BackendDriver.DEFAULT_CDI_CLASS;

  private final GenericDraBackend backend;
  private final BackendDriver driver;
  private final ConfigFollower follower;

  private GenericDraDriver(
      GenericDraBackend backend, BackendDriver driver, ConfigFollower follower) {
    this.backend = backend;
    this.driver = driver;
    this.follower = follower;
  }

  /**
   * The driver's settings.
   *
   * @param configFile the YAML or JSON file
   * @param root the directory holding {@code sys/} and {@code dev/}
   * @param pollInterval how often devices are read again
   * @param driverName the DRA driver's name
   * @param nodeName this node's name, also the pool's
   * @param pluginDir the DRA socket's directory
   * @param registryDir the kubelet's plugin watcher directory
   * @param cdiDir where the claims' CDI specs are written
   * @param podUid the pod's UID for rolling updates, or empty
   */
  public record Options(
      Path configFile,
      Path root,
      Duration pollInterval,
      String driverName,
      String nodeName,
      Path pluginDir,
      Path registryDir,
      Path cdiDir,
      Optional<String> podUid) {

    /**
     * Reads the flags as the driver's command line does ({@link GenericDraCommand}, {@code --dra}
     * among them); the node name defaults to {@code NODE_NAME}, the pod UID to {@code POD_UID}.
     *
     * @param args the command line
     * @param env the environment
     * @return the options
     * @throws IllegalArgumentException naming the bad flag, or the missing node name
     */
    public static Options parse(String[] args, Map<String, String> env) {
      return PluginCli.parse(new GenericDraCommand(), GenericDraCommand.defaults(env), args)
          .options();
    }
  }

  /**
   * Reads the configuration, starts the driver (slices published) and follows the file. The caller
   * serves it with a {@link DraPluginHost} over {@link #driver()}.
   *
   * @param options the settings
   * @param driverSettings applied to the driver's builder before it is built, e.g. the Kubernetes
   *     client (default: in-cluster or kubeconfig); may do nothing
   * @return the running driver
   * @throws ConfigException when the first configuration is unusable: nothing is started then
   * @throws IOException when the file cannot be read or its directory watched
   */
  public static GenericDraDriver start(
      Options options, Consumer<BackendDriver.Builder> driverSettings)
      throws ConfigException, IOException {
    Objects.requireNonNull(options, "options");
    GenericDraBackend backend =
        new GenericDraBackend(options.driverName(), options.root(), options.pollInterval());
    // The first file is applied before the driver starts, so its first slices hold the devices.
    ConfigFollower follower =
        ConfigFollower.start(options.configFile(), options.pollInterval(), backend::apply);
    try {
      BackendDriver.Builder b =
          BackendDriver.builder(options.driverName(), backend)
              .nodeName(options.nodeName())
              .cdiDirectory(options.cdiDir())
              .cdiKind(options.driverName(), CDI_CLASS)
              .mapping(backend.mapping());
      driverSettings.accept(b);
      BackendDriver driver = b.build();
      driver.start();
      return new GenericDraDriver(backend, driver, follower);
    } catch (RuntimeException e) {
      follower.close();
      throw e;
    }
  }

  /**
   * The DRA driver, for a {@link DraPluginHost}.
   *
   * @return the driver
   */
  public BackendDriver driver() {
    return driver;
  }

  /**
   * The backend publishing the configuration's devices.
   *
   * @return the backend
   */
  public GenericDraBackend backend() {
    return backend;
  }

  /**
   * Why the last change of the file was refused.
   *
   * @return the problem, naming the key; empty after a good file
   */
  public String lastError() {
    return follower.lastError();
  }

  /** Stops following the file and stops the driver. */
  @Override
  public void close() {
    follower.close();
    driver.close();
  }

  /**
   * With {@code --dra}: serves the configuration as a DRA driver until SIGTERM ({@link
   * GenericDraCommand}). Without: runs the device plugin ({@link GenericPlugin#main(String[])}).
   *
   * @param args the flags
   */
  public static void main(String[] args) {
    if (!List.of(args).contains("--dra")) {
      GenericPlugin.main(args);
      return;
    }
    System.exit(
        PluginCli.execute(
            new GenericDraCommand(), GenericDraCommand.defaults(System.getenv()), args));
  }
}
