package io.github.deviceplugin4j.core.internal.engine;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.MetricsSource;
import io.github.deviceplugin4j.core.ProbeResult;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.RateLimitedLog;
import io.github.deviceplugin4j.core.internal.Threads;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The host's HTTP endpoint, on the JDK's own server: {@code /healthz} (liveness), {@code /readyz}
 * (readiness) and {@code /metrics} (a {@link MetricsSource}). GET and HEAD only; answers are short
 * texts, never a stack trace. Requests are handled on one daemon thread with a short queue (beyond
 * it, on the JDK server's dispatcher thread): a probe that waits for a stuck loop waits at most the
 * liveness bound.
 *
 * <p>The socket is bound when this is created, so that a taken port fails the host's start before
 * anything else happens; requests are served after {@link #start}.
 */
public final class HttpEndpoint implements AutoCloseable {

  private static final Logger LOG = Loggers.named("HttpEndpoint");
  private static final String TEXT = "text/plain; charset=utf-8";
  private static final String ALLOW = "GET, HEAD";

  private final HttpServer server;
  private final ThreadPoolExecutor executor;
  private final RateLimitedLog metricsLog = new RateLimitedLog(LOG, Duration.ofMinutes(1));

  private HttpEndpoint(HttpServer server, ThreadPoolExecutor executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Binds the endpoint's socket (port 0 picks a free port); nothing is served until {@link #start}.
   * Throws a {@link ConfigurationException} when the address cannot be bound (taken, or not local).
   */
  public static HttpEndpoint bind(InetSocketAddress address) {
    HttpServer server;
    try {
      server = HttpServer.create(address, 16);
    } catch (BindException e) {
      throw new ConfigurationException(
          "cannot serve the HTTP endpoint (/healthz, /readyz, /metrics) on "
              + address
              + ": "
              + e.getMessage()
              + "; another process (or another plugin instance) uses it: choose another address"
              + " with httpEndpoint(...) (e.g. --metrics-address), or stop what listens there",
          e);
    } catch (IOException | RuntimeException e) {
      throw new ConfigurationException(
          "cannot serve the HTTP endpoint on " + address + ": " + e + "; check the address", e);
    }
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(32),
            Threads.factory("http", true),
            new ThreadPoolExecutor.CallerRunsPolicy());
    server.setExecutor(executor);
    return new HttpEndpoint(server, executor);
  }

  /**
   * Serves the endpoints; {@code liveness} may block up to its bound, and {@code /metrics} answers
   * 404 when {@code metrics} is null.
   */
  public void start(
      Supplier<ProbeResult> liveness, Supplier<ProbeResult> readiness, MetricsSource metrics) {
    server.createContext("/", exchange -> handle(exchange, liveness, readiness, metrics));
    server.start();
    LOG.info(
        "Serving /healthz, /readyz{} on http://{}", metrics == null ? "" : ", /metrics", host());
  }

  private String host() {
    String ip = address().getAddress().getHostAddress();
    return (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + address().getPort();
  }

  /** The bound address, with the actual port. */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  private void handle(
      HttpExchange exchange,
      Supplier<ProbeResult> liveness,
      Supplier<ProbeResult> readiness,
      MetricsSource metrics) {
    try (exchange) {
      String method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
      String path = exchange.getRequestURI().getPath();
      boolean known = "/healthz".equals(path) || "/readyz".equals(path) || "/metrics".equals(path);
      if (!known) {
        text(exchange, 404, "not found: try /healthz, /readyz or /metrics");
        return;
      }
      if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", ALLOW);
        text(exchange, 405, "method " + method + " not allowed; use GET or HEAD");
        return;
      }
      switch (path) {
        case "/healthz" -> probe(exchange, liveness.get());
        case "/readyz" -> probe(exchange, readiness.get());
        default -> metrics(exchange, metrics);
      }
    } catch (IOException e) {
      LOG.debug("HTTP endpoint: cannot answer {}: {}", exchange.getRequestURI(), e.toString());
    } catch (RuntimeException e) {
      LOG.warn("HTTP endpoint: error answering {}", exchange.getRequestURI(), e);
      try {
        text(exchange, 500, "internal error");
      } catch (IOException | RuntimeException headersSent) {
        // the answer had started; the connection is closed
      }
    }
  }

  private static void probe(HttpExchange exchange, ProbeResult result) throws IOException {
    text(exchange, result.ok() ? 200 : 503, result.describe());
  }

  private void metrics(HttpExchange exchange, MetricsSource metrics) throws IOException {
    if (metrics == null) {
      text(exchange, 404, "no metrics source configured (DevicePluginHost.Builder#metricsSource)");
      return;
    }
    String accept = exchange.getRequestHeaders().getFirst("Accept");
    ByteArrayOutputStream body = new ByteArrayOutputStream(8192);
    String type;
    try {
      type = metrics.scrape(accept == null ? "" : accept, body);
    } catch (IOException | RuntimeException e) {
      metricsLog.warn("HTTP endpoint: the metrics source failed: " + e, e);
      text(exchange, 500, "metrics unavailable");
      return;
    }
    send(exchange, 200, type == null ? TEXT : type, body.toByteArray());
  }

  private static void text(HttpExchange exchange, int status, String body) throws IOException {
    send(exchange, status, TEXT, (body + "\n").getBytes(StandardCharsets.UTF_8));
  }

  private static void send(HttpExchange exchange, int status, String type, byte[] body)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    if ("HEAD".equalsIgnoreCase(exchange.getRequestMethod())) {
      exchange.sendResponseHeaders(status, -1);
      return;
    }
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /** Stops serving and ends the endpoint's thread. */
  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
