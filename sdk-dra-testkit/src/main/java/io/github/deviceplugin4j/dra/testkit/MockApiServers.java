package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.util.HashMap;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Stopping fabric8's mock API server at the end of a test, for tests that start their own (the
 * {@link DraTest @DraTest} extension does this for its server).
 *
 * <p>In kubernetes-server-mock 7.9, a watch that closes while the server is sending it an event
 * blocks the server's event loop for up to a minute: the close handler waits for the watch's send
 * executor, and that executor's send waits for the same event loop. The server's own shutdown gives
 * up after 10 s and throws "Unable to close MockWebServer". A DRA driver watches its own
 * ResourceSlices, so a test that stops its driver right after the driver wrote one can meet it,
 * more often on a busy machine. Nothing the test checked depends on it, so {@link #destroy} logs it
 * and returns; the blocked server finishes on its own.
 */
public final class MockApiServers {
  private static final Logger LOG = Logger.getLogger(MockApiServers.class.getName());

  // Held here: java.util.logging keeps loggers weakly, a level set on a dropped one is lost.
  private static final Logger MOCK_SERVER_LOG = Logger.getLogger("io.fabric8.mockwebserver");

  private MockApiServers() {}

  /**
   * Starts fabric8's mock API server in CRUD mode (objects kept and served like an API server's,
   * over plain HTTP on a free local port), without its log line per request.
   *
   * @return the started server; stop it with {@link #destroy}
   */
  public static KubernetesMockServer startCrud() {
    return startCrud(false);
  }

  /**
   * Starts fabric8's mock API server in CRUD mode.
   *
   * @param requestLog whether the mock logs a line per request (its logger at INFO) or only
   *     warnings
   * @return the started server; stop it with {@link #destroy}
   */
  public static KubernetesMockServer startCrud(boolean requestLog) {
    MOCK_SERVER_LOG.setLevel(requestLog ? Level.INFO : Level.WARNING);
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new KubernetesCrudDispatcher(),
            false);
    server.init();
    return server;
  }

  /**
   * Stops the server; a shutdown cut short by the mock's own 10 s limit is logged, not thrown.
   *
   * @param server the mock API server
   * @throws IllegalStateException when the shutdown fails for another reason
   */
  public static void destroy(KubernetesMockServer server) {
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      if (!(e.getCause() instanceof TimeoutException)) {
        throw e;
      }
      LOG.log(
          Level.WARNING,
          "the mock API server did not stop within its own 10 s limit (a watch closed while an"
              + " event was being sent to it blocks the mock's event loop for up to a minute);"
              + " going on without it",
          e);
    }
  }
}
