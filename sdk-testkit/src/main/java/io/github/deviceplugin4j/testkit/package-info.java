/**
 * A fake kubelet for testing Kubernetes device plugins without a cluster.
 *
 * <p>{@link io.github.deviceplugin4j.testkit.FakeKubelet} serves the kubelet's side of the device
 * plugin API ({@code v1beta1.Registration} on {@code kubelet.sock}, the plugin watcher's {@code
 * pluginregistration.Registration} client, and {@code v1.PodResourcesLister}) over real Unix domain
 * sockets and real gRPC, and checks what a plugin sends the way the kubelet's device manager does.
 * It is cheap enough to start one per test:
 *
 * <pre>{@code
 * try (FakeKubelet kubelet = FakeKubelet.start(tempDir)) {
 *   startMyPlugin(tempDir);
 *   kubelet.awaitRegistration("example.com/fpga", Duration.ofSeconds(5));
 *   kubelet.awaitDevices("example.com/fpga", list -> list.size() == 4, Duration.ofSeconds(5));
 *   Allocation a = kubelet.allocate("example.com/fpga", 2);
 *   assertThat(a.devices()).hasSize(2);
 * }
 * }</pre>
 *
 * <p>A DRA driver is driven through the fake kubelet's DRA side, {@link
 * io.github.deviceplugin4j.testkit.FakeKubelet#dra()} (a {@link
 * io.github.deviceplugin4j.testkit.DraKubelet}).
 *
 * <p>The JUnit 5 glue is in {@link io.github.deviceplugin4j.testkit.junit5}; a command with a
 * conformance suite for plugins written in any language is in {@link
 * io.github.deviceplugin4j.testkit.cli}.
 */
package io.github.deviceplugin4j.testkit;
