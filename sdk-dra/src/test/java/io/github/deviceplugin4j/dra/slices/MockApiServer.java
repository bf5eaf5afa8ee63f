package io.github.deviceplugin4j.dra.slices;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;

/**
 * fabric8's mock API server in CRUD mode (real HTTP, objects stored and versioned) that also takes
 * one-off scripted answers, e.g. a 409 for the next PUT of a path.
 */
public final class MockApiServer implements AutoCloseable {
  public final KubernetesMockServer server;
  public final KubernetesClient client;

  public MockApiServer() {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            responses,
            new KubernetesMixedDispatcher(responses),
            false);
    server.init();
    client = server.createClient();
  }

  public Node createNode(String name) {
    return client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  @Override
  public void close() {
    client.close();
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      // The mock's shutdown gave up after its own 10 s: a watch (the publisher's own) closed while
      // an event was being sent to it, which blocks the mock's event loop for up to a minute
      // (kubernetes-server-mock 7.9; sdk-dra-testkit's MockApiServers says more). No assertion
      // depends on it.
      if (!(e.getCause() instanceof java.util.concurrent.TimeoutException)) {
        throw e;
      }
    }
  }
}
