/**
 * The engine behind {@link io.github.deviceplugin4j.core.DevicePluginHost}, split by concern into
 * sub-packages whose dependencies point one way (engine, registration, config, requests, state,
 * transport; see docs/architecture.md and {@code ArchitectureTest}). This package itself holds what
 * every one of them may use, and it uses none of them: threads ({@link
 * io.github.deviceplugin4j.core.internal.Threads}, {@link
 * io.github.deviceplugin4j.core.internal.SerialExecutor}), rate-limited logs and the SDK's logger
 * names, and the callers of the vendor's listeners and observers.
 *
 * <p><b>Internal.</b> Nothing in this package or its sub-packages is part of the public API; it may
 * change in any release without notice. Vendors use {@code io.github.deviceplugin4j.core} only.
 */
package io.github.deviceplugin4j.core.internal;
