/**
 * The engine behind {@link io.github.deviceplugin4j.core.DevicePluginHost}: sockets, registration,
 * re-registration, device streams, validation and the kubelet API adapters.
 *
 * <p><b>Internal.</b> Nothing in this package is part of the public API; it may change in any
 * release without notice. Vendors use {@code io.github.deviceplugin4j.core} only.
 */
package io.github.deviceplugin4j.core.internal;
