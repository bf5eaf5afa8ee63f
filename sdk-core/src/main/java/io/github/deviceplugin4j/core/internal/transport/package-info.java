/**
 * gRPC over Unix domain sockets: the servers ({@link
 * io.github.deviceplugin4j.core.internal.transport.UdsServer}, with its limits and connection gate)
 * and client channels ({@link io.github.deviceplugin4j.core.internal.transport.UdsChannels}) on
 * Netty, the logs of connection failures in grpc-java and Netty, and facts about socket files
 * (identity, type, liveness).
 *
 * <p>It knows nothing of device plugins: it may use {@code
 * io.github.deviceplugin4j.core.internal}'s utilities and the public API's exceptions, and no other
 * internal package. sdk-dra serves its sockets with it too.
 *
 * <p><b>Internal.</b> Not part of the public API; it may change in any release without notice.
 */
package io.github.deviceplugin4j.core.internal.transport;
