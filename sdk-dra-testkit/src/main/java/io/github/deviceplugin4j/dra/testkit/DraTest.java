package io.github.deviceplugin4j.dra.testkit;

import io.github.deviceplugin4j.testkit.DraKubelet;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives every test of the class a fresh simulated node for a DRA driver: the testkit's {@link
 * FakeKubelet} watching a plugins registry, fabric8's mock API server in CRUD mode with a client,
 * and the node's {@code Node} object in it. Everything is closed and the directories deleted after
 * each test.
 *
 * <p>A test method (or a {@code @BeforeEach}/{@code @AfterEach} method) takes any of {@link
 * DraCluster}, {@link FakeKubelet}, {@code KubernetesClient} and {@code KubernetesMockServer} as
 * parameters; non-static, non-final fields of those types are set before each test.
 *
 * <pre>{@code
 * @DraTest
 * class MyDriverTest {
 *   @Test
 *   void preparesAClaim(DraCluster cluster) {
 *     try (DraPluginHost host =
 *         BackendDriver.builder("gpu.example.com", backend)
 *             .kubernetesClient(cluster.client())
 *             .nodeName(cluster.nodeName())
 *             .host()
 *             .pluginDir(cluster.pluginDir("gpu.example.com"))
 *             .registryDir(cluster.registryDir())
 *             .start()) {
 *       cluster.kubelet().dra().awaitRegistration("gpu.example.com", Duration.ofSeconds(10));
 *       cluster.awaitDevices("gpu.example.com", devices -> !devices.isEmpty(), Duration.ofSeconds(10));
 *       cluster.scheduler().installDeviceClass("gpu.example.com");
 *       ResourceClaim claim = cluster.allocate(myClaim); // as the scheduler would
 *       ...
 *     }
 *   }
 * }
 * }</pre>
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(DraTestExtension.class)
public @interface DraTest {

  /**
   * The node's name: the {@code Node} object created in the API server before each test.
   *
   * @return the node name
   */
  String nodeName() default "node-1";

  /**
   * The DRA health service the fake kubelet watches: {@link DraKubelet#HEALTH_V1ALPHA1_SERVICE}
   * (what kubelets 1.34 to 1.36 call), {@link DraKubelet#HEALTH_V1_SERVICE}, or an empty string for
   * none (the feature gate off).
   *
   * @return the health service name, or empty
   */
  String draHealthService() default DraKubelet.HEALTH_V1ALPHA1_SERVICE;

  /**
   * Whether the mock API server's request log (one line per request, through {@code
   * java.util.logging}) stays on.
   *
   * @return true to keep the mock server's INFO lines
   */
  boolean apiServerLog() default false;
}
