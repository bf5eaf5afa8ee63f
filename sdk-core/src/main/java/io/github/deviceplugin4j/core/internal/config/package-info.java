/**
 * What one host's resources are wired with: the configuration the builder resolved ({@link
 * io.github.deviceplugin4j.core.internal.config.EngineConfig}) and the event loops, worker pool,
 * timer, listeners and observers they share ({@link
 * io.github.deviceplugin4j.core.internal.config.Shared}).
 *
 * <p>It may use {@code requests} (the API versions and request deadlines it lists) and {@code
 * io.github.deviceplugin4j.core.internal}'s utilities; registration and engine use it.
 *
 * <p><b>Internal.</b> Not part of the public API; it may change in any release without notice.
 */
package io.github.deviceplugin4j.core.internal.config;
