package io.github.deviceplugin4j.reliability;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A hostile HTTP/2 peer on a Unix socket: writes frames by hand (the test's own bytes, nothing from
 * a library), so it can send what no client library would. Blocking writes; a watchdog may close it
 * from another thread to end a write the server no longer reads.
 */
final class RawPeer implements AutoCloseable {

  static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  static final int DATA = 0;
  static final int HEADERS = 1;
  static final int RST_STREAM = 3;
  static final int SETTINGS = 4;
  static final int PING = 6;
  static final int CONTINUATION = 9;

  static final int END_STREAM = 0x1;
  static final int END_HEADERS = 0x4;

  private final SocketChannel channel;
  private final AtomicLong read = new AtomicLong();
  private Thread reader;

  private RawPeer(SocketChannel channel) {
    this.channel = channel;
  }

  static RawPeer connect(Path socket) throws IOException {
    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
    ch.connect(UnixDomainSocketAddress.of(socket));
    return new RawPeer(ch);
  }

  /** Sends the client preface and an empty SETTINGS frame. */
  RawPeer handshake() throws IOException {
    write(PREFACE);
    frame(SETTINGS, 0, 0, new byte[0]);
    return this;
  }

  /** Reads and discards everything the server sends, on a thread of its own. */
  RawPeer drain() {
    reader =
        new Thread(
            () -> {
              ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
              try {
                int n;
                while ((n = channel.read(buf)) >= 0) {
                  read.addAndGet(n);
                  buf.clear();
                }
              } catch (IOException closed) {
                // the server or the test closed the connection
              }
            },
            "raw-peer-reader");
    reader.setDaemon(true);
    reader.start();
    return this;
  }

  /** Bytes the drain thread read so far. */
  long bytesRead() {
    return read.get();
  }

  /**
   * Whether the server closed the connection: a read returns end of stream (or fails). Only for a
   * peer that does not drain; blocks until the server sends something or closes.
   */
  boolean serverClosed() {
    ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
    try {
      while (true) {
        buf.clear();
        if (channel.read(buf) < 0) {
          return true;
        }
      }
    } catch (IOException e) {
      return true;
    }
  }

  /** Whether the server has closed the connection by now (a read that does not wait). */
  boolean closedNow() {
    try {
      channel.configureBlocking(false);
      int n = channel.read(ByteBuffer.allocate(4096));
      channel.configureBlocking(true);
      return n < 0;
    } catch (IOException e) {
      return true;
    }
  }

  void write(byte[] bytes) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    while (b.hasRemaining()) {
      channel.write(b);
    }
  }

  void frame(int type, int flags, int stream, byte[] payload) throws IOException {
    write(frameBytes(type, flags, stream, payload, payload.length));
  }

  /** A frame header declaring {@code length} bytes, followed by {@code payload}. */
  static byte[] frameBytes(int type, int flags, int stream, byte[] payload, int length) {
    byte[] out = new byte[9 + payload.length];
    out[0] = (byte) (length >>> 16);
    out[1] = (byte) (length >>> 8);
    out[2] = (byte) length;
    out[3] = (byte) type;
    out[4] = (byte) flags;
    out[5] = (byte) ((stream >>> 24) & 0x7f);
    out[6] = (byte) (stream >>> 16);
    out[7] = (byte) (stream >>> 8);
    out[8] = (byte) stream;
    System.arraycopy(payload, 0, out, 9, payload.length);
    return out;
  }

  /**
   * A gRPC request's header block: literal fields without indexing, new names (HPACK 6.2.2), no
   * Huffman coding.
   */
  static byte[] requestHeaders(String path) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    literal(b, ":method", "POST");
    literal(b, ":scheme", "http");
    literal(b, ":path", path);
    literal(b, ":authority", "localhost");
    literal(b, "content-type", "application/grpc");
    literal(b, "te", "trailers");
    return b.toByteArray();
  }

  /** One literal header field without indexing, with a new name. */
  static void literal(ByteArrayOutputStream b, String name, String value) {
    b.write(0);
    string(b, name.getBytes(StandardCharsets.US_ASCII));
    string(b, value.getBytes(StandardCharsets.US_ASCII));
  }

  /** An HPACK string literal (no Huffman): its length as a 7-bit prefix integer, then bytes. */
  static void string(ByteArrayOutputStream b, byte[] s) {
    integer(b, 0, 7, s.length);
    b.write(s, 0, s.length);
  }

  /** An HPACK integer with an n-bit prefix (RFC 7541, 5.1), first byte's high bits given. */
  static void integer(ByteArrayOutputStream b, int high, int prefixBits, int value) {
    int max = (1 << prefixBits) - 1;
    if (value < max) {
      b.write(high | value);
      return;
    }
    b.write(high | max);
    value -= max;
    while (value >= 128) {
      b.write((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    b.write(value);
  }

  /** A gRPC message prefix declaring {@code length} bytes (uncompressed). */
  static byte[] grpcPrefix(int length) {
    return new byte[] {
      0, (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length
    };
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
