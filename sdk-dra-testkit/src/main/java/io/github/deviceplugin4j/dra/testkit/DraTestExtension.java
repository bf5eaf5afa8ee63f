package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The extension behind {@link DraTest @DraTest}; use the annotation rather than this class.
 *
 * <p>Before each test: a short temporary directory, the mock API server in CRUD mode with a client,
 * the node's {@code Node} object, and the fake kubelet watching {@code reg/} in the directory (and
 * serving PodResources on {@code pr/kubelet.sock}), which deletes the node's ResourceSlices at each
 * start and restart as kubelets from 1.32 do; then the test instance's fields of the supported
 * types are set. After each test: the kubelet, the client and the server are closed and the
 * directory deleted, whatever the test's outcome.
 */
public final class DraTestExtension
    implements BeforeEachCallback, AfterEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(DraTestExtension.class);
  private static final List<Class<?>> TYPES =
      List.of(
          DraCluster.class, FakeKubelet.class, KubernetesClient.class, KubernetesMockServer.class);

  /** Used by JUnit through {@link DraTest @DraTest}. */
  public DraTestExtension() {}

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    DraTest settings =
        context
            .getTestClass()
            .flatMap(c -> AnnotationSupport.findAnnotation(c, DraTest.class))
            .orElseThrow(
                () ->
                    new ExtensionConfigurationException(
                        "DraTestExtension is configured by @DraTest on the test class: put"
                            + " @DraTest there instead of @ExtendWith(DraTestExtension.class)"));
    Path root = Files.createTempDirectory(shortTempBase(), "dra");
    Resources r = new Resources(root);
    context.getStore(NAMESPACE).put(Resources.class, r);
    r.server = MockApiServers.startCrud(settings.apiServerLog());
    r.client = r.server.createClient();
    r.client
        .nodes()
        .resource(
            new NodeBuilder().withNewMetadata().withName(settings.nodeName()).endMetadata().build())
        .create();
    KubernetesClient client = r.client;
    String node = settings.nodeName();
    FakeKubelet.Builder kubelet =
        FakeKubelet.builder()
            .pluginDir(root.resolve("dp"))
            .registryDir(root.resolve("reg"))
            // The kubelet's PodResources API, for drivers' exporters (DraCluster.preparePod).
            .podResourcesSocket(root.resolve("pr/kubelet.sock"))
            // Like the kubelet's DRA registration handler at every start (1.32 and newer).
            .draResourceSliceWiper(() -> wipeResourceSlices(client, node));
    kubelet.draHealthService(
        settings.draHealthService().isEmpty() ? null : settings.draHealthService());
    r.kubelet = kubelet.start();
    r.cluster = new DraCluster(r.kubelet, r.server, r.client, settings.nodeName(), root);
    for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
      inject(instance, r);
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    Resources r = context.getStore(NAMESPACE).remove(Resources.class, Resources.class);
    if (r != null) {
      r.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return TYPES.contains(parameter.getParameter().getType());
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Resources r = context.getStore(NAMESPACE).get(Resources.class, Resources.class);
    if (r == null || r.cluster == null) {
      throw new ParameterResolutionException(
          "a "
              + parameter.getParameter().getType().getSimpleName()
              + " parameter is only available in test methods and @BeforeEach/@AfterEach methods"
              + " of a @DraTest class (one simulated node per test)");
    }
    return r.valueOf(parameter.getParameter().getType());
  }

  private static void inject(Object instance, Resources r) throws IllegalAccessException {
    for (Class<?> c = instance.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        int m = f.getModifiers();
        if (Modifier.isStatic(m) || Modifier.isFinal(m) || !TYPES.contains(f.getType())) {
          continue;
        }
        f.setAccessible(true);
        f.set(instance, r.valueOf(f.getType()));
      }
    }
  }

  /**
   * Deletes every ResourceSlice of the node, of all drivers, as the kubelet does when its DRA
   * registration handler starts ({@code wipeResourceSlices}: a DeleteCollection with the field
   * selector {@code spec.nodeName}; the mock server filters no fields, so here a list, then one
   * delete per slice of the node).
   */
  static void wipeResourceSlices(KubernetesClient client, String nodeName) {
    var slices = client.dynamicResourceAllocation().v1().resourcesSlices();
    for (var slice : slices.list().getItems()) {
      if (slice.getSpec() != null && nodeName.equals(slice.getSpec().getNodeName())) {
        slices.withName(slice.getMetadata().getName()).delete();
      }
    }
  }

  private static Path shortTempBase() {
    // Unix socket paths are limited to 108 bytes: keep the directory short.
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    return tmp.toAbsolutePath().toString().length() <= 40 ? tmp : Path.of("/tmp");
  }

  /** What one test holds; closed in reverse order of creation, each step whatever the others do. */
  private static final class Resources {
    final Path root;
    FakeKubelet kubelet;
    KubernetesMockServer server;
    KubernetesClient client;
    DraCluster cluster;

    Resources(Path root) {
      this.root = root;
    }

    Object valueOf(Class<?> type) {
      if (type == DraCluster.class) {
        return cluster;
      } else if (type == FakeKubelet.class) {
        return kubelet;
      } else if (type == KubernetesClient.class) {
        return client;
      }
      return server;
    }

    void close() {
      RuntimeException failure = null;
      try {
        if (client != null) {
          client.close();
        }
      } catch (RuntimeException e) {
        failure = e;
      }
      try {
        if (server != null) {
          MockApiServers.destroy(server);
        }
      } catch (RuntimeException e) {
        failure = add(failure, e);
      }
      try {
        if (kubelet != null) {
          kubelet.close();
        }
      } catch (RuntimeException e) {
        failure = add(failure, e);
      }
      try {
        deleteTree(root);
      } catch (UncheckedIOException e) {
        failure = add(failure, e);
      }
      if (failure != null) {
        throw failure;
      }
    }

    private static RuntimeException add(RuntimeException first, RuntimeException next) {
      if (first == null) {
        return next;
      }
      first.addSuppressed(next);
      return first;
    }

    private static void deleteTree(Path root) {
      if (!Files.exists(root)) {
        return;
      }
      try (Stream<Path> walk = Files.walk(root)) {
        for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("could not delete the test's directory " + root, e);
      }
    }
  }
}
