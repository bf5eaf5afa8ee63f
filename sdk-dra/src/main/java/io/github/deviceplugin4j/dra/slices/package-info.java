/**
 * The DRA driver's side of the API server: publishing the node's devices as ResourceSlices ({@link
 * io.github.deviceplugin4j.dra.slices.ResourceSlicePublisher}) and checking a ResourceClaim before
 * it is prepared ({@link io.github.deviceplugin4j.dra.slices.ClaimCheck}).
 */
@Experimental("follows resource.k8s.io/v1 ResourceSlices, which still evolve")
package io.github.deviceplugin4j.dra.slices;

import io.github.deviceplugin4j.core.Experimental;
