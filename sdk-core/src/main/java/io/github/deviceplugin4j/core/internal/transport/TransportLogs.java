package io.github.deviceplugin4j.core.internal.transport;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.logging.Filter;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the transport's failure logs out of {@code java.util.logging}, where grpc-java writes them
 * (a stack trace per broken connection: a peer sending garbage made grpc-java log 575,694 lines in
 * 30 s), and logs them through SLF4J under {@value #LOGGER}, at most one line per kind of failure
 * per {@link TransportLimits#LOG_PERIOD} at INFO or WARN, with how many were left out; every one,
 * with its stack trace, at DEBUG. A kind is the logger, the message and the cause's type.
 *
 * <p>Only the loggers of grpc-java's and Netty's transport classes named in {@link #LOGGERS} are
 * filtered; what they log below INFO is not touched. Netty logs through its own logger factory
 * (SLF4J when a backend is present, else {@code java.util.logging}): {@link NettyTransportLoggers}
 * wraps the same names there.
 */
public final class TransportLogs {

  /** The SLF4J logger the transport's failures go to. */
  public static final String LOGGER = "io.github.deviceplugin4j.transport";

  /** The {@code java.util.logging} loggers whose INFO, WARNING and SEVERE records go through. */
  static final List<String> LOGGERS =
      List.of(
          "io.grpc.netty.NettyServerTransport",
          // grpc-java logs a connection's end ("Transport failed") under this name, not its class's
          "io.grpc.netty.NettyServerTransport.connections",
          "io.grpc.netty.NettyServerHandler",
          "io.grpc.netty.NettyClientHandler",
          "io.grpc.netty.NettyClientTransport",
          "io.grpc.netty.Utils",
          "io.grpc.internal.ServerImpl",
          "io.grpc.internal.SerializingExecutor",
          "io.grpc.internal.ManagedChannelImpl",
          "io.grpc.internal.ManagedChannelOrphanWrapper",
          "io.grpc.internal.InternalSubchannel",
          "io.netty.handler.codec.http2.Http2ConnectionHandler",
          "io.netty.handler.codec.http2.DefaultHttp2ConnectionDecoder",
          "io.netty.handler.codec.http2.DefaultHttp2ConnectionEncoder",
          "io.netty.channel.DefaultChannelPipeline",
          "io.netty.util.concurrent.AbstractEventExecutor",
          "io.netty.util.concurrent.SingleThreadEventExecutor",
          "io.netty.bootstrap.ServerBootstrap",
          "io.netty.bootstrap.Bootstrap",
          // Netty's HTTP/2 limits, repackaged by grpc-java and as Netty has them
          "io.grpc.netty.Http2ControlFrameLimitEncoder",
          "io.netty.handler.codec.http2.Http2ControlFrameLimitEncoder",
          "io.netty.handler.codec.http2.Http2MaxRstFrameListener",
          "io.netty.handler.codec.http2.Http2EmptyDataFrameListener");

  /** Kinds remembered at most; past that, new kinds share one budget. */
  static final int MAX_KINDS = 256;

  private static final Logger LOG = LoggerFactory.getLogger(LOGGER);
  private static final AtomicBoolean INSTALLED = new AtomicBoolean();

  /** Strong references: {@code java.util.logging} holds its loggers weakly, filters included. */
  private static final List<java.util.logging.Logger> HELD = new ArrayList<>();

  private static final Limiter LIMITER =
      new Limiter(TransportLimits.LOG_PERIOD.toNanos(), System::nanoTime);

  private TransportLogs() {}

  /**
   * Installs the filters once per JVM; later calls do nothing. Call it before Netty's transport
   * classes are loaded (before the first event loop group): Netty gives each class its logger once.
   */
  public static void install() {
    if (!INSTALLED.compareAndSet(false, true)) {
      return;
    }
    NettyTransportLoggers.install(LOGGERS);
    Filter filter = TransportLogs::publish;
    for (String name : LOGGERS) {
      java.util.logging.Logger jul = java.util.logging.Logger.getLogger(name);
      jul.setFilter(filter);
      HELD.add(jul);
    }
  }

  /** Logs the record through SLF4J (rate-limited) and keeps it from the JDK's handlers. */
  private static boolean publish(LogRecord record) {
    if (record.getLevel().intValue() < Level.INFO.intValue()) {
      return true;
    }
    emit(
        record.getLoggerName(),
        record.getMessage(),
        text(record),
        record.getThrown(),
        record.getLevel().intValue() >= Level.WARNING.intValue()
            && !peerClosed(record.getThrown()));
    return false;
  }

  /**
   * Whether the cause is only the peer closing a stream or the connection: the kubelet does that on
   * every restart and a plugin's old instance sees it at every handover, so it is an event worth an
   * INFO line, not a WARN. grpc-java logs "Stream Error" at WARNING with Netty's {@code
   * StreamException} "Stream closed before write could take place" when an answer meets a stream
   * the peer has just reset; a closed channel, a reset connection or a broken pipe are the same
   * story on the connection.
   */
  static boolean peerClosed(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      String message = t.getMessage() == null ? "" : t.getMessage();
      if (t instanceof java.nio.channels.ClosedChannelException
          || message.contains("Stream closed before write could take place")
          || message.contains("Connection reset by peer")
          || message.contains("Broken pipe")) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /**
   * Logs one transport failure: every one at DEBUG, with its cause; at most one line per kind per
   * period at INFO or WARN, with the cause on the same line and how many were left out. The kind is
   * the reporting logger (grpc-java's or Netty's), the {@code pattern} (the message before its
   * arguments were filled in) and the type of the cause (null when none).
   */
  static void emit(String logger, String pattern, String text, Throwable cause, boolean warn) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("{} ({})", text, logger, cause);
    }
    String kind = logger + '|' + pattern + '|' + (cause == null ? "" : cause.getClass().getName());
    int skipped = LIMITER.admit(kind);
    if (skipped < 0) {
      return;
    }
    String line =
        text
            + (cause == null ? "" : ": " + summary(cause))
            + (skipped > 0 ? " (" + skipped + " more like it in the last minute)" : "")
            + " [grpc/netty transport; details at DEBUG]";
    if (warn) {
      LOG.warn(line);
    } else {
      LOG.info(line);
    }
  }

  private static String text(LogRecord record) {
    String message = record.getMessage();
    Object[] params = record.getParameters();
    if (message == null) {
      return "(no message)";
    }
    try {
      return params == null || params.length == 0
          ? message
          : java.text.MessageFormat.format(message, params);
    } catch (IllegalArgumentException e) {
      return message;
    }
  }

  /** The cause and its own causes on one line, type and message each. */
  static String summary(Throwable cause) {
    StringBuilder b = new StringBuilder();
    int depth = 0;
    for (Throwable t = cause; t != null && depth < 4; t = t.getCause(), depth++) {
      if (depth > 0) {
        b.append(" <- ");
      }
      b.append(t.getClass().getSimpleName());
      if (t.getMessage() != null) {
        String m = t.getMessage();
        b.append(": ").append(m.length() > 200 ? m.substring(0, 200) + "..." : m);
      }
    }
    return b.toString();
  }

  /** At most one line per kind per period. */
  static final class Limiter {
    private final long periodNanos;
    private final LongSupplier clock;
    private final Map<String, long[]> kinds = new ConcurrentHashMap<>();

    Limiter(long periodNanos, LongSupplier clock) {
      this.periodNanos = periodNanos;
      this.clock = clock;
    }

    /** -1 when a line of this kind may not be logged now, else how many were held back. */
    int admit(String kind) {
      String key = kinds.size() >= MAX_KINDS && !kinds.containsKey(kind) ? "(other)" : kind;
      long now = clock.getAsLong();
      long[] state = kinds.computeIfAbsent(key, k -> new long[] {now - periodNanos, 0});
      synchronized (state) {
        if (now - state[0] < periodNanos) {
          state[1]++;
          return -1;
        }
        int skipped = (int) state[1];
        state[0] = now;
        state[1] = 0;
        return skipped;
      }
    }
  }
}
