/**
 * Test support shared by the example plugins' tests (test scope only): {@link
 * io.github.deviceplugin4j.examples.testing.PluginUnderTest} runs backends against the testkit's
 * fake kubelet, {@link io.github.deviceplugin4j.examples.testing.StrictYaml} and {@link
 * io.github.deviceplugin4j.examples.testing.Manifests} check the {@code k8s/} manifests against
 * fabric8's typed Kubernetes model.
 */
package io.github.deviceplugin4j.examples.testing;
