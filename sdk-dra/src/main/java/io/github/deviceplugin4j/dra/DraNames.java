package io.github.deviceplugin4j.dra;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/** Names the kubelet uses for DRA drivers: the plugin type, the gRPC services, the socket paths. */
public final class DraNames {
  /** The {@code PluginInfo.type} a DRA driver registers with through the plugin watcher. */
  public static final String PLUGIN_TYPE = "DRAPlugin";

  /**
   * The name a driver lists in {@code supported_versions} for the DRA kubelet plugin API v1
   * (kubelets 1.34 and newer): upstream's {@code DRAPluginService} constant of {@code
   * k8s.io/kubelet/pkg/apis/dra/v1}, {@code "<proto package's last part>.<service>"}. It is not the
   * full gRPC service name ({@code k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin}): kubelets compare the
   * list with their constants, and 1.32/1.33 fall back to their oldest service (every call then
   * fails Unimplemented), 1.34 and newer refuse the registration.
   */
  public static final String SERVICE_V1 = "v1.DRAPlugin";

  /**
   * The name a driver lists in {@code supported_versions} for the DRA kubelet plugin API v1beta1
   * (kubelets 1.32 and newer): upstream's {@code DRAPluginService} constant of {@code
   * k8s.io/kubelet/pkg/apis/dra/v1beta1}.
   */
  public static final String SERVICE_V1BETA1 = "v1beta1.DRAPlugin";

  /**
   * The services a driver of this SDK serves, newest first, as sent in {@code supported_versions}.
   * Kubelets 1.34 and newer take the first entry they know (so v1), 1.32 and 1.33 the newest they
   * know (v1beta1, the only one of the two they know).
   */
  public static final List<String> SERVICES = List.of(SERVICE_V1, SERVICE_V1BETA1);

  /**
   * The DRA health API v1 as listed in {@code supported_versions} (upstream's {@code
   * DRAResourceHealthService} of {@code k8s.io/kubelet/pkg/apis/dra-health/v1}; here the proto
   * package is {@code v1}, so the short name is also the gRPC service name). Kubelets 1.32 and 1.33
   * watch no DRA health; 1.34 to 1.36 call v1alpha1 whatever the list says (with the {@code
   * ResourceHealthStatus} feature gate); newer kubelets pick the health service from the list, v1
   * before v1alpha1, and watch none when neither is listed.
   */
  public static final String HEALTH_SERVICE_V1 = "v1.DRAResourceHealth";

  /**
   * The DRA health API v1alpha1 as listed in {@code supported_versions} (upstream's {@code
   * DRAResourceHealthService} of {@code k8s.io/kubelet/pkg/apis/dra-health/v1alpha1}), the only one
   * kubelets 1.34 to 1.36 call; identical messages to v1.
   */
  public static final String HEALTH_SERVICE_V1ALPHA1 = "v1alpha1.DRAResourceHealth";

  /** The health services a driver of this SDK serves when it reports health, newest first. */
  public static final List<String> HEALTH_SERVICES =
      List.of(HEALTH_SERVICE_V1, HEALTH_SERVICE_V1ALPHA1);

  /** The kubelet's default directory of plugin registration sockets (the plugin watcher's). */
  public static final Path DEFAULT_REGISTRY_DIR = Path.of("/var/lib/kubelet/plugins_registry");

  /** The kubelet's default directory for plugin sockets and data. */
  public static final Path DEFAULT_PLUGINS_DIR = Path.of("/var/lib/kubelet/plugins");

  private DraNames() {}

  /**
   * Returns the default DRA socket of a driver, {@code /var/lib/kubelet/plugins/<driver>/dra.sock}.
   *
   * @param driverName the driver's name, e.g. {@code fpga.example.com}
   * @return the absolute socket path
   * @throws IllegalArgumentException if the name is empty or contains a path separator
   */
  public static Path defaultEndpoint(String driverName) {
    Objects.requireNonNull(driverName, "driverName");
    if (driverName.isEmpty() || driverName.contains("/") || driverName.equals("..")) {
      throw new IllegalArgumentException(
          "DRA driver name '"
              + driverName
              + "' cannot name a directory: use a DNS subdomain such as fpga.example.com");
    }
    return DEFAULT_PLUGINS_DIR.resolve(driverName).resolve("dra.sock");
  }
}
