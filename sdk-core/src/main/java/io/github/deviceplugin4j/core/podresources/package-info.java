/**
 * A client for the kubelet's PodResources API: which pod and container holds which device.
 *
 * <pre>{@code
 * try (PodResourcesClient client = PodResourcesClient.connect()) {
 *   client.ownerOf("vendor.example.com/fpga", "port0")
 *       .ifPresent(o -> log.info("port0 is used by {}/{} ({})",
 *           o.namespace(), o.podName(), o.containerName()));
 * }
 * }</pre>
 *
 * <p>Results are SDK-owned records; no generated protobuf type appears in the API.
 */
@Experimental("the kubelet's PodResources API still gains fields (dynamic resources, memory)")
package io.github.deviceplugin4j.core.podresources;

import io.github.deviceplugin4j.core.Experimental;
