package io.github.deviceplugin4j.examples.generic;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.deviceplugin4j.core.MetricsSource;
import io.github.deviceplugin4j.core.ProbeResult;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The generic plugin's HTTP endpoint: {@code /healthz}, {@code /readyz} and {@code /metrics}, as
 * the other examples serve them through {@code DevicePluginHost.Builder#httpEndpoint}, but for all
 * of the plugin's hosts at once: the generic plugin runs one host per resource (so that a change of
 * the file touches only the resources it changes), and one port cannot belong to each. Answers are
 * short texts ({@code ok}, or the problems), 503 for a failing probe, GET and HEAD only; on the
 * JDK's HTTP server and one daemon thread.
 *
 * <pre>{@code
 * ProbeEndpoint http = ProbeEndpoint.start(
 *     new InetSocketAddress(9400), () -> plugin.liveness(bound), plugin::readiness, source);
 * }</pre>
 */
public final class ProbeEndpoint implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProbeEndpoint.class);
  private static final String TEXT = "text/plain; charset=utf-8";

  private final HttpServer server;
  private final ExecutorService executor;
  private final AtomicBoolean closed = new AtomicBoolean();

  private ProbeEndpoint(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Binds the address and serves the probes and the metrics.
   *
   * @param address where to listen; port 0 picks a free one
   * @param liveness answers {@code /healthz}
   * @param readiness answers {@code /readyz}
   * @param metrics answers {@code /metrics}
   * @return the running endpoint
   * @throws IOException naming the address when it cannot be bound (taken, not local)
   */
  public static ProbeEndpoint start(
      InetSocketAddress address,
      Supplier<ProbeResult> liveness,
      Supplier<ProbeResult> readiness,
      MetricsSource metrics)
      throws IOException {
    Objects.requireNonNull(liveness, "liveness");
    Objects.requireNonNull(readiness, "readiness");
    Objects.requireNonNull(metrics, "metrics");
    HttpServer server;
    try {
      server = HttpServer.create(address, 16);
    } catch (IOException e) {
      throw new IOException(
          "cannot serve /healthz, /readyz and /metrics on "
              + address
              + ": "
              + e.getMessage()
              + "; choose another --metrics-address, or stop what listens there",
          e);
    }
    ExecutorService executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "generic-http");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext("/", exchange -> handle(exchange, liveness, readiness, metrics));
    server.start();
    log.info("Serving /healthz, /readyz, /metrics on {}", server.getAddress());
    return new ProbeEndpoint(server, executor);
  }

  /**
   * The bound address, with the actual port.
   *
   * @return the address
   */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** Stops serving; again does nothing (the stop signal and the shutdown hook both close). */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      server.stop(0);
      executor.shutdownNow();
    }
  }

  private static void handle(
      HttpExchange exchange,
      Supplier<ProbeResult> liveness,
      Supplier<ProbeResult> readiness,
      MetricsSource metrics) {
    try (exchange) {
      String method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
      String path = exchange.getRequestURI().getPath();
      if (!path.equals("/healthz") && !path.equals("/readyz") && !path.equals("/metrics")) {
        send(exchange, 404, TEXT, "not found: try /healthz, /readyz or /metrics\n");
      } else if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        send(exchange, 405, TEXT, "method " + method + " not allowed; use GET or HEAD\n");
      } else if (path.equals("/metrics")) {
        String accept = exchange.getRequestHeaders().getFirst("Accept");
        ByteArrayOutputStream body = new ByteArrayOutputStream(8192);
        String type = metrics.scrape(accept == null ? "" : accept, body);
        send(exchange, 200, type == null ? TEXT : type, body.toByteArray());
      } else {
        ProbeResult result = path.equals("/healthz") ? liveness.get() : readiness.get();
        send(exchange, result.ok() ? 200 : 503, TEXT, result.describe() + "\n");
      }
    } catch (IOException | RuntimeException e) {
      log.debug("HTTP endpoint: cannot answer {}: {}", exchange.getRequestURI(), e.toString());
      try {
        send(exchange, 500, TEXT, "internal error\n");
      } catch (IOException | RuntimeException started) {
        // the answer had started; the connection is closed
      }
    }
  }

  private static void send(HttpExchange exchange, int status, String type, String body)
      throws IOException {
    send(exchange, status, type, body.getBytes(StandardCharsets.UTF_8));
  }

  private static void send(HttpExchange exchange, int status, String type, byte[] body)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    if (exchange.getRequestMethod().equalsIgnoreCase("HEAD")) {
      exchange.sendResponseHeaders(status, -1);
      return;
    }
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }
}
