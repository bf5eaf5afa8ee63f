package io.github.deviceplugin4j.core.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/** The rate limit of the transport's failure logs, on a clock the test moves. */
class TransportLogsTest {

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final TransportLogs.Limiter limiter = new TransportLogs.Limiter(60, now::get);

  @Test
  void aKindLogsOncePerPeriod_thenSaysHowManyItLeftOut() {
    assertThat(limiter.admit("a")).isZero();
    assertThat(limiter.admit("a")).isNegative();
    assertThat(limiter.admit("a")).isNegative();
    assertThat(limiter.admit("b")).as("another kind has its own budget").isZero();
    now.addAndGet(60);
    assertThat(limiter.admit("a")).isEqualTo(2);
    assertThat(limiter.admit("a")).isNegative();
  }

  @Test
  void kindsPastTheLimitShareOneBudget_soMemoryStaysBounded() {
    for (int i = 0; i < TransportLogs.MAX_KINDS; i++) {
      assertThat(limiter.admit("kind-" + i)).isZero();
    }
    assertThat(limiter.admit("one more")).isZero();
    assertThat(limiter.admit("and another"))
        .as("shares the budget of the first extra")
        .isNegative();
  }

  @Test
  void aCauseIsSummedUpOnOneLine_withItsOwnCauses() {
    Exception cause =
        new IllegalStateException("outer", new java.io.IOException("Connection reset by peer"));
    assertThat(TransportLogs.summary(cause))
        .isEqualTo("IllegalStateException: outer <- IOException: Connection reset by peer")
        .doesNotContain("\n");
  }

  @Test
  void aPeerClosingAStreamOrTheConnection_isExpected() {
    Http2Exception streamClosed =
        Http2Exception.streamError(
            3, Http2Error.STREAM_CLOSED, "Stream closed before write could take place");
    assertThat(TransportLogs.peerClosed(streamClosed)).isTrue();
    assertThat(TransportLogs.peerClosed(new IllegalStateException("wrapped", streamClosed)))
        .isTrue();
    assertThat(TransportLogs.peerClosed(new ClosedChannelException())).isTrue();
    assertThat(TransportLogs.peerClosed(new IOException("Connection reset by peer"))).isTrue();
    assertThat(TransportLogs.peerClosed(new IOException("Broken pipe"))).isTrue();
  }

  @Test
  void aProtocolErrorOrNoCause_isNotAPeerClosing() {
    assertThat(
            TransportLogs.peerClosed(
                Http2Exception.connectionError(Http2Error.PROTOCOL_ERROR, "bad frame")))
        .isFalse();
    assertThat(TransportLogs.peerClosed(new IOException("No space left on device"))).isFalse();
    assertThat(TransportLogs.peerClosed(null)).isFalse();
  }

  /**
   * grpc-java's "Stream Error" at WARNING for a stream the peer reset (seen in a rolling update's
   * handover) comes out at INFO; a stream error for another cause stays a WARN.
   */
  @Test
  void grpcStreamErrorForAStreamThePeerClosed_isLoggedAtInfo_anotherStaysWarn() {
    TransportLogs.install();
    // grpc-netty's own name; the tests' logging.properties raises io.grpc.netty to SEVERE
    java.util.logging.Logger grpc =
        java.util.logging.Logger.getLogger("io.grpc.netty.NettyServerHandler");
    Level level = grpc.getLevel();
    grpc.setLevel(Level.INFO);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream original = System.err;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      grpc.log(
          Level.WARNING,
          "Stream Error (peer closed, test)",
          Http2Exception.streamError(
              5, Http2Error.STREAM_CLOSED, "Stream closed before write could take place"));
      grpc.log(
          Level.WARNING,
          "Stream Error (flow control, test)",
          Http2Exception.streamError(7, Http2Error.FLOW_CONTROL_ERROR, "window exceeded"));
    } finally {
      System.setErr(original);
      grpc.setLevel(level);
    }
    String out = err.toString(StandardCharsets.UTF_8);
    assertThat(out.lines().filter(l -> l.contains("peer closed, test")))
        .singleElement()
        .satisfies(l -> assertThat(l).contains("INFO").doesNotContain("WARN"));
    assertThat(out.lines().filter(l -> l.contains("flow control, test")))
        .singleElement()
        .satisfies(l -> assertThat(l).contains("WARN"));
  }
}
