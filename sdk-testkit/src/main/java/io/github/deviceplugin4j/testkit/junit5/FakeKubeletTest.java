package io.github.deviceplugin4j.testkit.junit5;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives every test of the class a fresh {@link io.github.deviceplugin4j.testkit.FakeKubelet} in a
 * short temporary directory, injected as a parameter of test and lifecycle methods, closed after
 * the test, and fails a passing test that leaks plugin connections or sockets.
 *
 * <pre>{@code
 * @FakeKubeletTest(podResources = true)
 * class MonitorTest {
 *   @Test
 *   void listsPods(FakeKubelet kubelet) { ... }
 * }
 * }</pre>
 *
 * <p>Do not combine with a {@code @RegisterExtension FakeKubeletExtension} field in the same class:
 * use one or the other.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(FakeKubeletExtension.class)
public @interface FakeKubeletTest {
  /**
   * Whether to enable plugin-watcher mode on a registry directory next to the plugin directory.
   *
   * @return true to watch a registry directory
   */
  boolean registry() default false;

  /**
   * Whether to serve PodResources on a socket next to the plugin directory.
   *
   * @return true to serve PodResources
   */
  boolean podResources() default false;

  /**
   * The grace period before a disconnected resource is removed, in milliseconds; negative for the
   * kubelet's 5 minutes.
   *
   * @return milliseconds, or negative for the default
   */
  long gracePeriodMillis() default -1;

  /**
   * Whether a passing test fails when plugins are still connected or left sockets behind.
   *
   * @return true to check for leaks
   */
  boolean leakCheck() default true;
}
