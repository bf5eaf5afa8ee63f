package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.util.Objects;

/**
 * One test's simulated node for a DRA driver, as {@link DraTest @DraTest} sets it up: the fake
 * kubelet, the mock API server and its client, the node name, and short directories for the
 * driver's sockets. Valid until the end of the test.
 */
public final class DraCluster {
  private final FakeKubelet kubelet;
  private final KubernetesMockServer apiServer;
  private final KubernetesClient client;
  private final String nodeName;
  private final Path root;

  DraCluster(
      FakeKubelet kubelet,
      KubernetesMockServer apiServer,
      KubernetesClient client,
      String nodeName,
      Path root) {
    this.kubelet = kubelet;
    this.apiServer = apiServer;
    this.client = client;
    this.nodeName = nodeName;
    this.root = root;
  }

  /**
   * The fake kubelet; it watches {@link #registryDir()}.
   *
   * @return the kubelet
   */
  public FakeKubelet kubelet() {
    return kubelet;
  }

  /**
   * fabric8's mock API server in CRUD mode (to script one-off answers with {@code expect()}).
   *
   * @return the server
   */
  public KubernetesMockServer apiServer() {
    return apiServer;
  }

  /**
   * A client of the mock API server, for the driver and for the test (which plays the scheduler by
   * writing claim allocations).
   *
   * @return the client
   */
  public KubernetesClient client() {
    return client;
  }

  /**
   * The node's name; its {@code Node} object exists in the API server.
   *
   * @return the node name
   */
  public String nodeName() {
    return nodeName;
  }

  /**
   * The plugins registry the fake kubelet watches: the driver's registration socket goes here.
   *
   * @return the registry directory
   */
  public Path registryDir() {
    return kubelet.registryDir().orElseThrow();
  }

  /**
   * A short directory for a driver's DRA socket and data (like {@code
   * /var/lib/kubelet/plugins/<driver>}); created by the driver, deleted after the test.
   *
   * @param driver the driver name
   * @return the directory
   */
  public Path pluginDir(String driver) {
    Objects.requireNonNull(driver, "driver");
    return root.resolve("plugins").resolve(driver);
  }

  /**
   * A directory for the driver's CDI specs (like {@code /var/run/cdi}), deleted after the test.
   *
   * @return the directory
   */
  public Path cdiDir() {
    return root.resolve("cdi");
  }
}
