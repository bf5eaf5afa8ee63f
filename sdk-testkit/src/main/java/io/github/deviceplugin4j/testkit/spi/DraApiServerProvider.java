package io.github.deviceplugin4j.testkit.spi;

import java.nio.file.Path;

/**
 * Starts a Kubernetes API server for {@code fake-kubelet conform --dra}: found with {@link
 * java.util.ServiceLoader} (list the implementation in {@code
 * META-INF/services/io.github.deviceplugin4j.testkit.spi.DraApiServerProvider}); when there is one,
 * the driver under test gets the server's address in its environment and the {@code
 * dra-slices-valid} and {@code dra-unhealthy-tainted} checks read the ResourceSlices it publishes.
 * When several are on the class path the first one found is used.
 *
 * <pre>{@code
 * public final class MyProvider implements DraApiServerProvider {
 *   public String description() {
 *     return "my API server";
 *   }
 *
 *   public DraApiServer start(String nodeName, Path workDir) throws Exception {
 *     // start a server, create the Node nodeName, write a kubeconfig under workDir
 *     return new MyServer(...);
 *   }
 * }
 * }</pre>
 *
 * <p>An implementation needs a public no-argument constructor.
 */
public interface DraApiServerProvider {

  /**
   * What the provider starts, for the report, e.g. {@code "fabric8 mock API server (CRUD)"}.
   *
   * @return a short description
   */
  String description();

  /**
   * Starts a server in which the Node {@code nodeName} exists.
   *
   * @param nodeName the name of the node the driver runs on (it looks its Node object up)
   * @param workDir an empty directory the server may write files in (a kubeconfig); deleted after
   *     the run
   * @return the running server; closed after the driver has stopped
   * @throws Exception when the server cannot start; {@code conform} reports it and exits 1
   */
  DraApiServer start(String nodeName, Path workDir) throws Exception;
}
