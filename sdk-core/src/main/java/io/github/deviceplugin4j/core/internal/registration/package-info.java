/**
 * How a resource gets and keeps its place at the kubelet: its socket and the instances that may
 * share it during a rolling update ({@link
 * io.github.deviceplugin4j.core.internal.registration.SocketOwner}, {@link
 * io.github.deviceplugin4j.core.internal.registration.InstanceSockets}, {@link
 * io.github.deviceplugin4j.core.internal.registration.Lease}), legacy {@code Register} on {@code
 * kubelet.sock} and plugin watcher registration ({@link
 * io.github.deviceplugin4j.core.internal.registration.LegacyRegistration}, {@link
 * io.github.deviceplugin4j.core.internal.registration.WatcherRegistration}), re-registration after
 * a kubelet restart with backoff, and the watch of the plugin directory that tells of one ({@link
 * io.github.deviceplugin4j.core.internal.registration.DirectoryWatcher}).
 *
 * <p>It may use {@code config}, {@code requests} (the Register request of each API version and the
 * options it announces), {@code transport} and {@code io.github.deviceplugin4j.core.internal}'s
 * utilities; only the engine uses it.
 *
 * <p><b>Internal.</b> Not part of the public API; it may change in any release without notice.
 */
package io.github.deviceplugin4j.core.internal.registration;
