/**
 * Serves a deviceplugin4j backend as a Kubernetes Dynamic Resource Allocation (DRA) driver: the
 * kubelet plugin services, device health, and the ResourceSlices the scheduler allocates from.
 */
package io.github.deviceplugin4j.dra;
