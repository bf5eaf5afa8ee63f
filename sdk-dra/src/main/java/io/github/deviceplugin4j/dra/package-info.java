/**
 * Serves a deviceplugin4j backend as a Kubernetes Dynamic Resource Allocation (DRA) driver: the
 * kubelet plugin services, device health, and the ResourceSlices the scheduler allocates from.
 *
 * <p>Two ways in: hand an existing {@link io.github.deviceplugin4j.core.DeviceBackend} to {@link
 * io.github.deviceplugin4j.dra.BackendDriver} (slices, per-claim CDI specs and health are derived
 * from the backend's devices), or implement the small {@link
 * io.github.deviceplugin4j.dra.DraDriver} yourself and run it with {@link
 * io.github.deviceplugin4j.dra.DraPluginHost}.
 *
 * <pre>{@code
 * BackendDriver.builder("fpga.example.com", new FpgaBackend(Path.of("/"))).host().run();
 * }</pre>
 */
@Experimental("follows resource.k8s.io/v1 and the kubelet's DRA plugin API, which still evolve")
package io.github.deviceplugin4j.dra;

import io.github.deviceplugin4j.core.Experimental;
