/**
 * The engine of the DRA kubelet plugin: claim bookkeeping, checkpoint, lock, gRPC services, health
 * fan-out, registration. Internal: not an API, it may change in any release.
 */
package io.github.deviceplugin4j.dra.internal;
