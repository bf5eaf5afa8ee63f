/**
 * The top of the engine: {@link io.github.deviceplugin4j.core.internal.engine.HostEngine} starts
 * and stops a host's resources and turns the plugin directory's file events into their triggers;
 * {@link io.github.deviceplugin4j.core.internal.engine.ResourcePlugin} wires one resource (its
 * device state, request handler, discovery of the backend's devices and registration strategy).
 * Liveness, stop signals and the HTTP endpoint of probes and metrics live here too.
 *
 * <p>It may use every other internal package; none of them uses it. The public API ({@link
 * io.github.deviceplugin4j.core.DevicePluginHost}) builds a config and starts the engine.
 *
 * <p><b>Internal.</b> Not part of the public API; it may change in any release without notice.
 */
package io.github.deviceplugin4j.core.internal.engine;
