package io.github.deviceplugin4j.dra.slices;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * fabric8's mock API server in CRUD mode (real HTTP, objects stored and versioned) that also takes
 * one-off scripted answers, e.g. a 409 for the next PUT of a path. It can be taken away ({@link
 * #down}: every request answered 503, as an API server that is restarting) and can play an API
 * server without the DRADeviceTaints gate ({@link #dropTaints}: device taints removed from every
 * ResourceSlice written).
 */
public final class MockApiServer implements AutoCloseable {
  public final KubernetesMockServer server;
  public final KubernetesClient client;

  /** While true, every request is answered 503 Service Unavailable. */
  public final AtomicBoolean down = new AtomicBoolean();

  /** While true, the "taints" of devices in written ResourceSlices are dropped. */
  public final AtomicBoolean dropTaints = new AtomicBoolean();

  /** Requests answered 503 while {@link #down}. */
  public final AtomicInteger refused = new AtomicInteger();

  public MockApiServer() {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            responses,
            new KubernetesMixedDispatcher(responses) {
              @Override
              public MockResponse dispatch(RecordedRequest request) {
                if (down.get()) {
                  refused.incrementAndGet();
                  return new MockResponse()
                      .setResponseCode(503)
                      .setBody(
                          "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                              + "\"message\":\"the API server is away\",\"code\":503}");
                }
                if (dropTaints.get()
                    && request.getPath().contains("/resourceslices")
                    && request.getBody() != null
                    && request.getBody().size() > 0) {
                  String body = request.getBody().readUtf8();
                  ResourceSlice slice = Serialization.unmarshal(body, ResourceSlice.class);
                  if (slice.getSpec() != null && slice.getSpec().getDevices() != null) {
                    slice.getSpec().getDevices().forEach(d -> d.setTaints(null));
                  }
                  request =
                      new RecordedRequest(
                          request.getHttpVersion(),
                          request.method(),
                          request.getPath(),
                          request.getHeaders(),
                          new Buffer(Serialization.asJson(slice).getBytes(StandardCharsets.UTF_8)));
                }
                return super.dispatch(request);
              }
            },
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
