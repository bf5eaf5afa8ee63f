package io.github.deviceplugin4j.dra.conform;

import io.github.deviceplugin4j.testkit.spi.DraApiServer;
import io.github.deviceplugin4j.testkit.spi.DraApiServerProvider;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The API server of {@code fake-kubelet conform --dra} when this module is on the class path:
 * fabric8's mock API server in CRUD mode (real HTTP, objects kept as written, no validation of its
 * own), with the Node the driver runs on created first. Found with {@link java.util.ServiceLoader};
 * a vendor does not call it.
 *
 * <pre>{@code
 * try (DraApiServer api = new MockDraApiServerProvider().start("node-1", workDir)) {
 *   api.environment(); // KUBECONFIG, KUBERNETES_MASTER, ...
 *   api.slices("gpu.example.com");
 * }
 * }</pre>
 */
public final class MockDraApiServerProvider implements DraApiServerProvider {

  /** For {@link java.util.ServiceLoader}. */
  public MockDraApiServerProvider() {}

  @Override
  public String description() {
    return "fabric8 mock API server, CRUD mode";
  }

  @Override
  public DraApiServer start(String nodeName, Path workDir) throws IOException {
    return MockDraApiServer.start(nodeName, workDir);
  }
}
