package io.github.deviceplugin4j.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.testkit.Allocation;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile and broken peers against a real plugin process (the FPGA example's jar, with the images'
 * JVM flags) registered with the fake kubelet: each attack writes raw HTTP/2 frames to the plugin's
 * Unix socket, bounded in time, and afterwards the plugin must still be alive, the fake kubelet's
 * own connection must still allocate, a new client must be answered within 1 s, the plugin's RSS
 * must stay under {@link #RSS_BOUND_MIB} and its log must grow by at most {@link
 * #LOG_LINES_PER_ATTACK} lines. Each attack prints a row of docs/reliability.md's table.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostilePeerTest {

  /** The plugin's resident memory after any attack, at most. */
  static final long RSS_BOUND_MIB = 160;

  /** Lines one attack may add to the plugin's log. */
  static final int LOG_LINES_PER_ATTACK = 12;

  /** How long a flood lasts at most. */
  static final Duration FLOOD = Duration.ofSeconds(2);

  /** The bound on answering a new client after an attack. */
  static final Duration NEW_CLIENT_WITHIN = Duration.ofSeconds(1);

  static final String OPTIONS = "/v1beta1.DevicePlugin/GetDevicePluginOptions";
  static final String ALLOCATE = "/v1beta1.DevicePlugin/Allocate";

  private PluginUnderAttack plugin;
  private ScheduledExecutorService watchdog;
  private EventLoopGroup clientGroup;

  @BeforeAll
  void startPlugin(@TempDir Path tmp) throws Exception {
    plugin = PluginUnderAttack.start(tmp);
    watchdog = Executors.newSingleThreadScheduledExecutor();
    clientGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  }

  @AfterAll
  void stopPlugin() throws Exception {
    watchdog.shutdownNow();
    clientGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    if (plugin != null) {
      plugin.close();
    }
  }

  // ---- control-frame floods ----

  @Test
  void pingFlood_notReading() throws Exception {
    attack("PING flood, not reading", () -> flood(ping(), false));
  }

  @Test
  void pingFlood_reading() throws Exception {
    attack("PING flood, reading", () -> flood(ping(), true));
  }

  @Test
  void settingsFlood_notReading() throws Exception {
    attack(
        "SETTINGS flood, not reading",
        () -> flood(RawPeer.frameBytes(RawPeer.SETTINGS, 0, 0, new byte[0], 0), false));
  }

  @Test
  void settingsFlood_reading() throws Exception {
    attack(
        "SETTINGS flood, reading",
        () -> flood(RawPeer.frameBytes(RawPeer.SETTINGS, 0, 0, new byte[0], 0), true));
  }

  // ---- connections ----

  @Test
  void thousandsOfIdleConnections_raw() throws Exception {
    attack("2,000 idle connections, nothing sent", () -> idleConnections(false));
  }

  @Test
  void thousandsOfIdleConnections_afterThePreface() throws Exception {
    attack("2,000 idle connections after the preface", () -> idleConnections(true));
  }

  @Test
  void garbageInsteadOfThePreface() throws Exception {
    attack(
        "garbage instead of the preface, 500 connections x 64 KiB",
        () -> {
          byte[] garbage = new byte[64 * 1024];
          Arrays.fill(garbage, (byte) 'G');
          int closed = 0;
          for (int i = 0; i < 500; i++) {
            try (RawPeer peer = RawPeer.connect(plugin.socket())) {
              try {
                peer.write(garbage);
              } catch (IOException serverClosed) {
                // the server closed it while we wrote
              }
              if (peer.serverClosed()) {
                closed++;
              }
            }
          }
          return closed + " of 500 closed by the plugin";
        });
  }

  // ---- streams and messages ----

  /**
   * As many streams as the plugin allows on one connection (16), each sending all but the last
   * bytes of a 4 MiB message; then 60 streams, the ones past the limit refused.
   */
  @Test
  void unfinishedFourMebibyteMessages_onManyStreams() throws Exception {
    attack(
        "16 streams, each all but the end of a 4 MiB message",
        () -> unfinishedMessages(16, 4 * 1024 * 1024 - 16 * 1024));
    attack(
        "60 streams, each an unfinished 4 MiB message (256 KiB sent each)",
        () -> unfinishedMessages(60, 256 * 1024));
  }

  String unfinishedMessages(int streams, int bytesEach) throws Exception {
    return bounded(
        false,
        peer -> {
          byte[] chunk = new byte[16 * 1024];
          for (int s = 0; s < streams; s++) {
            int stream = 1 + 2 * s;
            peer.frame(
                RawPeer.HEADERS, RawPeer.END_HEADERS, stream, RawPeer.requestHeaders(ALLOCATE));
            peer.frame(RawPeer.DATA, 0, stream, RawPeer.grpcPrefix(4 * 1024 * 1024));
          }
          for (int sent = 0; sent < bytesEach; sent += chunk.length) {
            for (int s = 0; s < streams; s++) {
              peer.frame(RawPeer.DATA, 0, 1 + 2 * s, chunk);
            }
          }
        });
  }

  @Test
  void unlimitedStreams_heldAtAZeroWindow() throws Exception {
    attack(
        "10,000 calls opened with a zero window, held",
        () ->
            bounded(
                false,
                peer -> {
                  // SETTINGS_INITIAL_WINDOW_SIZE (0x4) = 0: no answer's DATA can be sent.
                  peer.frame(RawPeer.SETTINGS, 0, 0, new byte[] {0, 4, 0, 0, 0, 0});
                  byte[] headers = RawPeer.requestHeaders(OPTIONS);
                  for (int s = 0; s < 10_000; s++) {
                    int stream = 3 + 2 * s;
                    peer.frame(RawPeer.HEADERS, RawPeer.END_HEADERS, stream, headers);
                    peer.frame(RawPeer.DATA, RawPeer.END_STREAM, stream, RawPeer.grpcPrefix(0));
                  }
                }));
  }

  @Test
  void rapidReset_withoutRequestData() throws Exception {
    attack("rapid reset, 10,000 streams, no data", () -> rapidReset(false));
  }

  @Test
  void rapidReset_withRequestData() throws Exception {
    attack("rapid reset, 10,000 streams, with data", () -> rapidReset(true));
  }

  @Test
  void dataFrameDeclaringSixteenMebibytes() throws Exception {
    attack(
        "DATA frame declaring 16 MiB",
        () ->
            bounded(
                false,
                peer -> {
                  peer.frame(
                      RawPeer.HEADERS, RawPeer.END_HEADERS, 1, RawPeer.requestHeaders(ALLOCATE));
                  peer.write(
                      RawPeer.frameBytes(RawPeer.DATA, 0, 1, new byte[4096], 16 * 1024 * 1024));
                  peer.write(new byte[1024 * 1024]);
                }));
  }

  // ---- header blocks ----

  @Test
  void hpackBomb() throws Exception {
    attack(
        "HPACK bomb: one 4 KiB entry referenced 40,000 times",
        () ->
            bounded(
                false,
                peer -> {
                  ByteArrayOutputStream block = new ByteArrayOutputStream();
                  block.write(RawPeer.requestHeaders(OPTIONS));
                  // Literal with incremental indexing, new name: dynamic table entry 62.
                  block.write(0x40);
                  RawPeer.string(block, "x-bomb".getBytes(StandardCharsets.US_ASCII));
                  byte[] value = new byte[4000];
                  Arrays.fill(value, (byte) 'a');
                  RawPeer.string(block, value);
                  for (int i = 0; i < 40_000; i++) {
                    block.write(0x80 | 62); // indexed field 62: 4 KiB for one byte
                  }
                  headerBlock(peer, 1, block.toByteArray());
                }));
  }

  @Test
  void oneMebibyteHeaderList() throws Exception {
    attack(
        "1 MiB header list",
        () ->
            bounded(
                false,
                peer -> {
                  ByteArrayOutputStream block = new ByteArrayOutputStream();
                  block.write(RawPeer.requestHeaders(OPTIONS));
                  char[] big = new char[1024 * 1024];
                  Arrays.fill(big, 'b');
                  RawPeer.literal(block, "x-big", new String(big));
                  headerBlock(peer, 1, block.toByteArray());
                }));
  }

  @Test
  void continuationFlood() throws Exception {
    attack(
        "CONTINUATION flood",
        () ->
            bounded(
                false,
                peer -> {
                  peer.frame(RawPeer.HEADERS, 0, 1, RawPeer.requestHeaders(OPTIONS));
                  ByteArrayOutputStream piece = new ByteArrayOutputStream();
                  for (int i = 0; i < 100; i++) {
                    RawPeer.literal(piece, "x-c" + i, "continuation-continuation");
                  }
                  byte[] frame =
                      RawPeer.frameBytes(
                          RawPeer.CONTINUATION, 0, 1, piece.toByteArray(), piece.size());
                  while (true) {
                    peer.write(frame);
                  }
                }));
  }

  // ---- the checks after each attack ----

  /** An attack: returns what happened to it, for the table. */
  interface Attack {
    String run() throws Exception;
  }

  /** What an attack does on one connection. */
  interface OnConnection {
    void run(RawPeer peer) throws Exception;
  }

  void attack(String name, Attack attack) throws Exception {
    long linesBefore = plugin.logLines();
    long start = System.nanoTime();
    String outcome = attack.run();
    long attackMs = (System.nanoTime() - start) / 1_000_000;

    assertThat(plugin.alive()).as("plugin alive after: %s; log:\n%s", name, plugin.log()).isTrue();
    Allocation a = plugin.kubelet().allocate(plugin.resource(), 1);
    assertThat(a.deviceIds()).as("the fake kubelet's own connection allocates").hasSize(1);
    plugin.kubelet().release(a.podUid());
    long answerMs = newClientAnswers();
    long rss = plugin.rssMiB();
    long lines = plugin.logLines() - linesBefore;
    String transportLines =
        plugin.logLinesAfter(linesBefore).stream()
            .filter(l -> l.contains("transport - "))
            .map(l -> l.substring(l.indexOf("transport - ") + "transport - ".length()))
            .map(l -> l.replace(" [grpc/netty transport; details at DEBUG]", ""))
            .collect(java.util.stream.Collectors.joining(" / "));
    Figures.print(
        String.format(
            "hostile %s | %s | %s | attack %d ms | new client %d ms | RSS %d MiB | log +%d lines"
                + " | %s",
            plugin.name(), name, outcome, attackMs, answerMs, rss, lines, transportLines));
    if (!plugin.isTheSdk()) {
      return; // the peer row is measured, not held to the SDK's bounds
    }
    assertThat(rss).as("RSS after: %s", name).isLessThanOrEqualTo(RSS_BOUND_MIB);
    assertThat(lines)
        .as("log lines added by: %s; log:\n%s", name, plugin.log())
        .isLessThanOrEqualTo(LOG_LINES_PER_ATTACK);
  }

  /**
   * A new client's first call is answered within {@link #NEW_CLIENT_WITHIN} of the attack's end; a
   * connection refused (the plugin still counting the attack's connections) is tried again.
   */
  long newClientAnswers() throws Exception {
    long start = System.nanoTime();
    long deadline = start + NEW_CLIENT_WITHIN.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      ManagedChannel channel =
          NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(plugin.socket()))
              .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
              .eventLoopGroup(clientGroup)
              .withOption(ChannelOption.SO_KEEPALIVE, null)
              .usePlaintext()
              .build();
      try {
        DevicePluginOptions options =
            DevicePluginGrpc.newBlockingStub(channel)
                .withDeadlineAfter(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)
                .getDevicePluginOptions(Empty.getDefaultInstance());
        assertThat(options).isNotNull();
        return (System.nanoTime() - start) / 1_000_000;
      } catch (io.grpc.StatusRuntimeException e) {
        last = e;
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    throw new AssertionError(
        "no new client was answered within " + NEW_CLIENT_WITHIN.toMillis() + " ms", last);
  }

  /**
   * Runs an attack on one connection after the handshake until it ends, the plugin closes the
   * connection, or {@link #FLOOD} passes (a watchdog closes it); then closes it.
   */
  String bounded(boolean read, OnConnection onConnection) throws Exception {
    RawPeer peer = RawPeer.connect(plugin.socket()).handshake();
    if (read) {
      peer.drain();
    }
    AtomicBoolean cut = new AtomicBoolean();
    ScheduledFuture<?> stop =
        watchdog.schedule(
            () -> {
              cut.set(true);
              peer.close();
            },
            FLOOD.toMillis(),
            TimeUnit.MILLISECONDS);
    try {
      onConnection.run(peer);
    } catch (IOException e) {
      if (!cut.get()) {
        stop.cancel(false);
        peer.close();
        return "connection closed by the plugin";
      }
    }
    stop.cancel(false);
    if (cut.get()) {
      return "ran " + FLOOD.toSeconds() + " s, cut by the test";
    }
    if (!read && peerClosedByServer(peer)) {
      return "connection closed by the plugin";
    }
    peer.close();
    return "sent; connection left open";
  }

  /** Whether the plugin closes the connection within the flood's bound (a watchdog ends it). */
  private boolean peerClosedByServer(RawPeer peer) {
    AtomicBoolean cut = new AtomicBoolean();
    ScheduledFuture<?> stop =
        watchdog.schedule(
            () -> {
              cut.set(true);
              peer.close();
            },
            FLOOD.toMillis(),
            TimeUnit.MILLISECONDS);
    boolean closed = peer.serverClosed();
    stop.cancel(false);
    peer.close();
    return closed && !cut.get();
  }

  String flood(byte[] frame, boolean read) throws Exception {
    byte[] batch = new byte[frame.length * 64];
    for (int i = 0; i < 64; i++) {
      System.arraycopy(frame, 0, batch, i * frame.length, frame.length);
    }
    return bounded(
        read,
        peer -> {
          while (true) {
            peer.write(batch);
          }
        });
  }

  static byte[] ping() {
    return RawPeer.frameBytes(RawPeer.PING, 0, 0, new byte[8], 8);
  }

  String idleConnections(boolean preface) throws Exception {
    List<RawPeer> peers = new ArrayList<>();
    int refused = 0;
    int closedByPlugin = 0;
    try {
      for (int i = 0; i < 2_000; i++) {
        try {
          RawPeer peer = RawPeer.connect(plugin.socket());
          peers.add(peer);
          if (preface) {
            peer.handshake();
          }
        } catch (IOException e) {
          refused++;
        }
      }
      // While they are held, the kubelet's own connection still allocates.
      Allocation a = plugin.kubelet().allocate(plugin.resource(), 1);
      assertThat(a.deviceIds()).hasSize(1);
      plugin.kubelet().release(a.podUid());
      closedByPlugin = (int) peers.stream().filter(RawPeer::closedNow).count();
    } finally {
      peers.forEach(RawPeer::close);
    }
    return peers.size()
        + " opened ("
        + refused
        + " failed to connect), "
        + closedByPlugin
        + " closed by the plugin at once; the rest held, then closed";
  }

  String rapidReset(boolean withData) throws Exception {
    return bounded(
        true,
        peer -> {
          byte[] headers = RawPeer.requestHeaders(ALLOCATE);
          byte[] rst = {0, 0, 0, 8}; // CANCEL
          for (int s = 0; s < 10_000; s++) {
            int stream = 1 + 2 * s;
            peer.frame(RawPeer.HEADERS, RawPeer.END_HEADERS, stream, headers);
            if (withData) {
              peer.frame(RawPeer.DATA, 0, stream, RawPeer.grpcPrefix(1024));
            }
            peer.frame(RawPeer.RST_STREAM, 0, stream, rst);
          }
        });
  }

  /** A header block in a HEADERS frame and as many CONTINUATION frames as it needs. */
  static void headerBlock(RawPeer peer, int stream, byte[] block) throws IOException {
    int max = 16 * 1024;
    int first = Math.min(max, block.length);
    peer.frame(
        RawPeer.HEADERS,
        first == block.length ? RawPeer.END_HEADERS : 0,
        stream,
        Arrays.copyOfRange(block, 0, first));
    for (int off = first; off < block.length; off += max) {
      int end = Math.min(block.length, off + max);
      peer.frame(
          RawPeer.CONTINUATION,
          end == block.length ? RawPeer.END_HEADERS : 0,
          stream,
          Arrays.copyOfRange(block, off, end));
    }
  }
}
