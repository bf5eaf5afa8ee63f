package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.spi.DraApiServer;
import io.github.deviceplugin4j.testkit.spi.DraApiServerProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The Kubernetes API server of a {@code conform --dra} run, when a {@link DraApiServerProvider} is
 * on the class path (the deviceplugin4j-dra-conform jar has one): started before the driver, its
 * environment given to the driver, closed after the driver stopped. Without a provider it is empty
 * and the API-server checks are skipped.
 */
final class DraApiServerSession implements AutoCloseable {

  /** What the API-server checks say when no provider is on the class path. */
  static final String NO_PROVIDER =
      "no Kubernetes API server: run conform from deviceplugin4j-dra-conform's -cli"
          + " jar, which serves a Kubernetes API server for the driver";

  private final String nodeName;
  private final Optional<DraApiServer> server;
  private final String description;

  private DraApiServerSession(String nodeName, DraApiServer server, String description) {
    this.nodeName = nodeName;
    this.server = Optional.ofNullable(server);
    this.description = description;
  }

  /** A session without an API server (a device plugin run, or no provider). */
  static DraApiServerSession none(String nodeName) {
    return new DraApiServerSession(nodeName, null, "");
  }

  /** The first provider on the class path, if any. */
  static Optional<DraApiServerProvider> provider() {
    Iterator<DraApiServerProvider> it =
        ServiceLoader.load(DraApiServerProvider.class, DraApiServerSession.class.getClassLoader())
            .iterator();
    return it.hasNext() ? Optional.of(it.next()) : Optional.empty();
  }

  /**
   * Starts the first provider's server, or returns a session without one.
   *
   * @throws Exception when the provider fails to start its server
   */
  static DraApiServerSession start(String nodeName, Path workDir) throws Exception {
    Optional<DraApiServerProvider> p = provider();
    if (p.isEmpty()) {
      return none(nodeName);
    }
    Files.createDirectories(workDir);
    return new DraApiServerSession(
        nodeName, p.get().start(nodeName, workDir), p.get().description());
  }

  Optional<DraApiServer> server() {
    return server;
  }

  String nodeName() {
    return nodeName;
  }

  /** For the report: the server's URL and what serves it. */
  String describe() {
    return server.map(s -> s.url() + " (" + description + "; node " + nodeName + ")").orElse("");
  }

  /** NODE_NAME and the server's variables, for the driver and the hooks. */
  Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("NODE_NAME", nodeName);
    server.ifPresent(s -> env.putAll(s.environment()));
    return env;
  }

  /** Replaces {node} and {kubeconfig} (empty without a server). */
  String substitute(String arg) {
    return arg.replace("{node}", nodeName)
        .replace(
            "{kubeconfig}",
            server.map(s -> s.environment().getOrDefault("KUBECONFIG", "")).orElse(""));
  }

  @Override
  public void close() {
    server.ifPresent(DraApiServer::close);
  }
}
