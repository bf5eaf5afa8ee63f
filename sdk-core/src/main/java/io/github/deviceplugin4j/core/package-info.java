/**
 * The vendor API of deviceplugin4j: implement {@link io.github.deviceplugin4j.core.DeviceBackend},
 * optionally one or more of the capability interfaces ({@link
 * io.github.deviceplugin4j.core.Allocator}, {@link
 * io.github.deviceplugin4j.core.PreferredAllocator}, {@link
 * io.github.deviceplugin4j.core.PreStartHook}), and hand it to {@link
 * io.github.deviceplugin4j.core.DevicePluginHost}.
 *
 * <p>Every type a vendor sees is an SDK-owned value type; no generated protobuf type appears in a
 * vendor's method signatures, so a future kubelet API version is a translation layer inside the
 * core.
 */
package io.github.deviceplugin4j.core;
