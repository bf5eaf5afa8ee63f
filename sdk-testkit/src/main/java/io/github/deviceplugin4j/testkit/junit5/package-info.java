/**
 * JUnit 5 glue for the fake kubelet; runs on JUnit 5.10 and newer, including JUnit 6.
 *
 * <pre>{@code
 * class MyPluginTest {
 *   @RegisterExtension FakeKubeletExtension kubelet = FakeKubeletExtension.create();
 *
 *   @Test
 *   void registers() {
 *     startMyPlugin(kubelet.get().pluginDir());
 *     kubelet.get().awaitRegistration("example.com/fpga", Duration.ofSeconds(5));
 *   }
 * }
 * }</pre>
 *
 * <p>Or declaratively, with the kubelet injected as a parameter:
 *
 * <pre>{@code
 * @FakeKubeletTest
 * class MyPluginTest {
 *   @Test
 *   void registers(FakeKubelet kubelet) { ... }
 * }
 * }</pre>
 */
package io.github.deviceplugin4j.testkit.junit5;
