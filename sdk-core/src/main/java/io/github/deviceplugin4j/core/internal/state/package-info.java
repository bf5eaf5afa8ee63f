/**
 * One resource's device list as the kubelet sees it: validated {@link
 * io.github.deviceplugin4j.core.internal.state.Snapshot}s of what the backend publishes ({@link
 * io.github.deviceplugin4j.core.internal.state.Validation} also checks what the kubelet asks
 * against them), and the ListAndWatch streams that watch the list ({@link
 * io.github.deviceplugin4j.core.internal.state.DeviceState}, {@link
 * io.github.deviceplugin4j.core.internal.state.Subscriber}).
 *
 * <p>It may use {@code io.github.deviceplugin4j.core.internal}'s utilities and nothing else of the
 * engine. It knows no kubelet API version: each version's adapter encodes lists through {@link
 * io.github.deviceplugin4j.core.internal.state.DeviceListEncoder}.
 *
 * <p><b>Internal.</b> Not part of the public API; it may change in any release without notice.
 */
package io.github.deviceplugin4j.core.internal.state;
