package io.github.deviceplugin4j.core.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * What the SDK's own HTTP/2 code ({@link UnaryCall}, the client of {@code Register}, and {@link
 * H2Server}) shares: the connection preface and the frame types and flags of RFC 9113.
 */
final class Http2Frames {

  /** The client's connection preface. */
  static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  /** Bytes of a frame header. */
  static final int HEADER = 9;

  /** The largest frame either side accepts (the protocol's default; neither announces more). */
  static final int MAX_FRAME = 16_384;

  static final int DATA = 0;
  static final int HEADERS = 1;
  static final int RST_STREAM = 3;
  static final int SETTINGS = 4;
  static final int PUSH_PROMISE = 5;
  static final int PING = 6;
  static final int GOAWAY = 7;
  static final int WINDOW_UPDATE = 8;
  static final int CONTINUATION = 9;

  static final int END_STREAM = 0x1;
  static final int ACK = 0x1;
  static final int END_HEADERS = 0x4;
  static final int PADDED = 0x8;
  static final int PRIORITY = 0x20;

  private Http2Frames() {}

  /**
   * The payload length named by the frame header at {@code at}.
   *
   * @param in the bytes read
   * @param at where the frame header starts
   * @return the payload's length (24 bits)
   */
  static int length(ByteBuffer in, int at) {
    return (in.get(at) & 0xff) << 16 | (in.get(at + 1) & 0xff) << 8 | in.get(at + 2) & 0xff;
  }

  /**
   * The frame type named by the frame header at {@code at}.
   *
   * @param in the bytes read
   * @param at where the frame header starts
   * @return the type
   */
  static int type(ByteBuffer in, int at) {
    return in.get(at + 3) & 0xff;
  }

  /**
   * The flags of the frame header at {@code at}.
   *
   * @param in the bytes read
   * @param at where the frame header starts
   * @return the flags
   */
  static int flags(ByteBuffer in, int at) {
    return in.get(at + 4) & 0xff;
  }

  /**
   * The stream of the frame header at {@code at}, its reserved bit cleared.
   *
   * @param in the bytes read
   * @param at where the frame header starts
   * @return the stream identifier
   */
  static int stream(ByteBuffer in, int at) {
    return in.getInt(at + 5) & 0x7fffffff;
  }

  /**
   * Writes a frame header.
   *
   * @param out where it goes (room for {@link #HEADER} bytes)
   * @param length the payload's length
   * @param type the frame type
   * @param flags the flags
   * @param stream the stream identifier
   */
  static void putHeader(ByteBuffer out, int length, int type, int flags, int stream) {
    out.put((byte) (length >>> 16)).put((byte) (length >>> 8)).put((byte) length);
    out.put((byte) type).put((byte) flags).putInt(stream);
  }

  /**
   * Where a DATA or HEADERS frame's content lies once its padding, and {@code skip} bytes after the
   * pad length (a HEADERS frame's priority fields), are taken off.
   *
   * @param frame the bytes holding the frame's payload
   * @param from where the payload starts
   * @param length the payload's length
   * @param flags the frame's flags
   * @param skip bytes to skip after the pad length
   * @return {start, end}, or null when the padding and the skipped bytes do not fit the payload
   */
  static int[] content(byte[] frame, int from, int length, int flags, int skip) {
    int start = from;
    int end = from + length;
    if ((flags & PADDED) != 0) {
      if (length < 1) {
        return null;
      }
      end -= frame[from] & 0xff;
      start++;
    }
    start += skip;
    return start > end ? null : new int[] {start, end};
  }
}
