package io.github.deviceplugin4j.dra.conform;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.github.deviceplugin4j.dra.testkit.MockApiServers;
import io.github.deviceplugin4j.testkit.spi.DraApiServer;
import io.github.deviceplugin4j.testkit.spi.PublishedSlice;
import io.github.deviceplugin4j.testkit.spi.PublishedSlice.PublishedDevice;
import io.github.deviceplugin4j.testkit.spi.PublishedSlice.Taint;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** fabric8's mock API server in CRUD mode, with a kubeconfig file naming it. */
final class MockDraApiServer implements DraApiServer {

  private final KubernetesMockServer server;
  private final KubernetesClient client;
  private final String url;
  private final Map<String, String> environment;

  private MockDraApiServer(
      KubernetesMockServer server, KubernetesClient client, String url, Path kubeconfig) {
    this.server = server;
    this.client = client;
    this.url = url;
    Map<String, String> env = new LinkedHashMap<>();
    env.put("KUBECONFIG", kubeconfig.toString());
    // fabric8's Config reads these (kubernetes.master, kubernetes.auth.tryKubeConfig, ...): the
    // driver talks to this server, never to a cluster the machine's ~/.kube/config or a service
    // account names.
    env.put("KUBERNETES_MASTER", url);
    env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
    env.put("KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
    this.environment = Map.copyOf(env);
  }

  static MockDraApiServer start(String nodeName, Path workDir) throws IOException {
    KubernetesMockServer server = MockApiServers.startCrud();
    KubernetesClient client = server.createClient();
    try {
      client
          .nodes()
          .resource(new NodeBuilder().withNewMetadata().withName(nodeName).endMetadata().build())
          .create();
      String url = client.getMasterUrl().toString();
      Path kubeconfig = workDir.resolve("kubeconfig");
      Files.writeString(kubeconfig, kubeconfig(url), StandardCharsets.UTF_8);
      return new MockDraApiServer(server, client, url, kubeconfig);
    } catch (IOException | RuntimeException e) {
      client.close();
      MockApiServers.destroy(server);
      throw e;
    }
  }

  /** A kubeconfig with one context: the server, no credentials (the mock wants none). */
  static String kubeconfig(String url) {
    return String.join(
        "\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: conform",
        "  cluster:",
        "    server: " + url,
        "users:",
        "- name: conform",
        "  user: {}",
        "contexts:",
        "- name: conform",
        "  context:",
        "    cluster: conform",
        "    user: conform",
        "    namespace: default",
        "current-context: conform",
        "");
  }

  @Override
  public String url() {
    return url;
  }

  @Override
  public Map<String, String> environment() {
    return environment;
  }

  @Override
  public List<PublishedSlice> slices(String driverName) {
    return client.dynamicResourceAllocation().v1().resourcesSlices().list().getItems().stream()
        .filter(s -> s.getSpec() != null && driverName.equals(s.getSpec().getDriver()))
        .sorted(Comparator.comparing(s -> String.valueOf(s.getMetadata().getName())))
        .map(MockDraApiServer::published)
        .toList();
  }

  static PublishedSlice published(ResourceSlice slice) {
    ResourceSliceSpec spec = slice.getSpec();
    ResourcePool pool = Optional.ofNullable(spec.getPool()).orElseGet(ResourcePool::new);
    List<PublishedDevice> devices =
        Optional.ofNullable(spec.getDevices()).orElse(List.of()).stream()
            .map(MockDraApiServer::published)
            .toList();
    return new PublishedSlice(
        String.valueOf(slice.getMetadata().getName()),
        spec.getDriver(),
        String.valueOf(pool.getName()),
        Optional.ofNullable(pool.getGeneration()).orElse(0L),
        Optional.ofNullable(pool.getResourceSliceCount()).orElse(0L),
        SliceRules.nodeSelection(spec),
        devices,
        SliceRules.problems(slice));
  }

  private static PublishedDevice published(Device d) {
    return new PublishedDevice(
        String.valueOf(d.getName()),
        Optional.ofNullable(d.getTaints()).orElse(List.of()).stream()
            .map(t -> new Taint(String.valueOf(t.getKey()), t.getValue(), t.getEffect()))
            .toList());
  }

  @Override
  public void close() {
    client.close();
    MockApiServers.destroy(server);
  }
}
