package io.github.deviceplugin4j.core.internal.transport;

import java.time.Duration;

/**
 * The limits of every gRPC socket the SDK serves or calls (device plugin, plugin-watcher
 * registration, DRA driver), each chosen here once and explained. The transport is grpc-java's
 * Netty server and client; these values harden it against peers that are broken or hostile (a
 * monitoring agent poking the socket, a buggy client, a future kubelet), while never refusing what
 * a real kubelet does: it holds one or two connections to a plugin socket, makes at most a few
 * calls at once on each (one ListAndWatch stream, then PreStart/GetPreferredAllocation/Allocate one
 * after another for each pod), sends a few hundred bytes of headers and requests far below 4 MiB,
 * and its gRPC-Go client (v1.26-1.35 kubelets: gRPC-Go 1.26-1.7x) sends no keepalive pings on these
 * connections; its BDP pings follow data the server sent, which resets the ping counters.
 *
 * <p>Left at grpc-java's and Netty's defaults, on purpose: the flow-control window (1 MiB per
 * stream), and Netty's cap of 10,000 control frames (PING and SETTINGS acknowledgements,
 * RST_STREAM) queued for a peer that does not read, past which the connection is closed.
 * docs/operations.md ("Transport limits") lists the same values for operators.
 */
public final class TransportLimits {

  private TransportLimits() {}

  /**
   * Calls open at once on one connection: 16. A kubelet uses up to 3 on a plugin's socket; a client
   * that wants more waits for a slot (HTTP/2's MAX_CONCURRENT_STREAMS), as gRPC clients do, so
   * 2,000 concurrent calls still complete. It bounds what one connection can make the plugin hold:
   * gRPC keeps a request until its last byte, so 16 unfinished requests of {@link
   * #MAX_INBOUND_MESSAGE_BYTES} are 64 MiB of direct memory. With 32, one connection exhausted the
   * images' direct memory (128 MiB with their flags); the JDK then refuses the next buffer and that
   * connection is closed, the plugin goes on (HostilePeerTest).
   */
  public static final int MAX_CONCURRENT_CALLS_PER_CONNECTION = 16;

  /**
   * Connections open at once on one socket: 16. The kubelet holds one or two (plus a superseded one
   * until it restarts); the fake kubelet and tests a few more. A connection over the limit is
   * closed as soon as it is accepted, before anything is read from it, with one rate-limited log
   * line. Connections that never complete the HTTP/2 handshake leave after {@link
   * #HANDSHAKE_TIMEOUT}, idle ones after {@link #MAX_CONNECTION_IDLE}, so a peer that opens many
   * and then does nothing blocks new ones for at most that long.
   */
  public static final int MAX_CONNECTIONS_PER_SOCKET = 16;

  /**
   * Connections the kernel queues for a socket before the server accepts them: 32 (Netty's default
   * is the system's {@code somaxconn}, 4,096 here). A peer opening thousands of connections then
   * waits in {@code connect()} for the server to take each one instead of leaving thousands queued
   * that the server must accept and close before it reaches the next real client: with 4,096, a
   * client connecting after 2,000 such connections waited 0.5-0.7 s; with 32, milliseconds.
   */
  public static final int ACCEPT_BACKLOG = 32;

  /**
   * How long a new connection may take to send the HTTP/2 preface and its first SETTINGS frame: 10
   * s (gRPC's default is 120 s). A gRPC client sends both at once on connect; what sends nothing or
   * garbage is closed.
   */
  public static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  /**
   * A connection with no call open for this long is closed gracefully (GOAWAY, then close): 5 min.
   * The kubelet's device plugin connection always holds its ListAndWatch stream, so it is never
   * idle; the registration and DRA connections of a gRPC client simply reconnect on their next
   * call.
   */
  public static final Duration MAX_CONNECTION_IDLE = Duration.ofMinutes(5);

  /**
   * The largest message received: 4 MiB, gRPC's default and the kubelet's own limit. A request that
   * names every device of a device list (GetPreferredAllocation's available IDs) is below the
   * device list's own 4 MiB.
   */
  public static final int MAX_INBOUND_MESSAGE_BYTES = 4 * 1024 * 1024;

  /**
   * The largest header list received: 8 KiB, gRPC's default; a kubelet's is about 200 bytes. A
   * larger list ends the call (a stream error), and an HPACK block decoding past it ends the
   * connection with GOAWAY.
   */
  public static final int MAX_INBOUND_METADATA_BYTES = 8 * 1024;

  /**
   * Keepalive pings a client may send: one per 20 s without data between them, also with no call
   * open. A client pinging faster gets two strikes, then GOAWAY {@code ENHANCE_YOUR_CALM} ("too
   * many pings") and the connection closes. gRPC's default (5 min, not without calls) is stricter;
   * the looser value tolerates a client configured with keepalive, which the kubelet's is not.
   */
  public static final Duration PERMIT_KEEPALIVE_TIME = Duration.ofSeconds(20);

  /**
   * RST_STREAM frames a client may send per {@link #RST_WINDOW} before its connection is closed
   * with GOAWAY {@code ENHANCE_YOUR_CALM} (the HTTP/2 "rapid reset" attack, thousands a second):
   * 1,000 per 10 s. A kubelet cancels a call only when it gives up on a pod's admission or stops
   * watching a resource; the fake kubelet's tests cancel up to 300 ListAndWatch streams within a
   * second or two on one connection, which Netty's own default (200 per 30 s) would cut off.
   */
  public static final int MAX_RST_FRAMES_PER_WINDOW = 1_000;

  /** The window of {@link #MAX_RST_FRAMES_PER_WINDOW}. */
  public static final Duration RST_WINDOW = Duration.ofSeconds(10);

  /** How often one kind of transport failure is logged at INFO or WARN: once a minute. */
  public static final Duration LOG_PERIOD = Duration.ofMinutes(1);
}
