package io.github.deviceplugin4j.testkit.spi;

import java.util.List;
import java.util.Map;

/**
 * A running Kubernetes API server for a DRA driver under test, started by a {@link
 * DraApiServerProvider}: what the driver needs to reach it, and the ResourceSlices it published,
 * checked against the API server's validation rules.
 *
 * <pre>{@code
 * try (DraApiServer api = provider.start("node-1", workDir)) {
 *   env.putAll(api.environment()); // KUBECONFIG, KUBERNETES_MASTER, ...
 *   // ... start the driver ...
 *   List<PublishedSlice> slices = api.slices("gpu.example.com");
 * }
 * }</pre>
 */
public interface DraApiServer extends AutoCloseable {

  /**
   * The server's URL, e.g. {@code http://127.0.0.1:40123/}.
   *
   * @return the URL
   */
  String url();

  /**
   * The environment variables that point a driver at this server: at least {@code KUBECONFIG}, a
   * kubeconfig file naming the server (for client-go and most clients), and for fabric8's client
   * {@code KUBERNETES_MASTER}, {@code KUBERNETES_AUTH_TRYKUBECONFIG=false} and {@code
   * KUBERNETES_AUTH_TRYSERVICEACCOUNT=false}.
   *
   * @return the variables, by name
   */
  Map<String, String> environment();

  /**
   * The ResourceSlices of one driver as the server holds them now, each with the problems the API
   * server's validation ({@code pkg/apis/resource/validation} in kubernetes/kubernetes) finds in
   * it.
   *
   * @param driverName the driver's name ({@code spec.driver})
   * @return the slices whose {@code spec.driver} is {@code driverName}, by name
   * @throws Exception when the server cannot be read
   */
  List<PublishedSlice> slices(String driverName) throws Exception;

  /** Stops the server. */
  @Override
  void close();
}
