/**
 * The DevicePlugin service the kubelet calls, per API version ({@link
 * io.github.deviceplugin4j.core.internal.requests.ApiAdapter}, {@link
 * io.github.deviceplugin4j.core.internal.requests.V1Beta1Adapter}, listed in {@link
 * io.github.deviceplugin4j.core.internal.requests.ApiVersions}), and the request path behind it:
 * {@link io.github.deviceplugin4j.core.internal.requests.RequestHandler} checks Allocate,
 * GetPreferredAllocation and PreStartContainer, calls the backend within its deadlines and checks
 * its answers; {@link io.github.deviceplugin4j.core.internal.requests.Statuses} turns errors into
 * gRPC statuses. The warm-up of that path lives here too.
 *
 * <p>It may use {@code state} (the device list it checks requests against and streams), {@code
 * transport} (the warm-up's client channel) and {@code io.github.deviceplugin4j.core.internal}'s
 * utilities; not registration, config or engine.
 *
 * <p><b>Internal.</b> Not part of the public API; it may change in any release without notice.
 */
package io.github.deviceplugin4j.core.internal.requests;
