package io.github.deviceplugin4j.core.internal.requests;

import io.github.deviceplugin4j.core.internal.transport.UdsChannels;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Calls a server over its real Unix socket, one call after another on one connection, with
 * grpc-java's own client: the server's whole per-call path (the event loop, Netty's HTTP/2 codec,
 * gRPC's call path, the messages) is then loaded and compiled before the kubelet's first call, and
 * so is the client channel the legacy {@code Register} uses.
 */
public final class SocketWarmUp {

  private SocketWarmUp() {}

  /** What a warm-up did: calls answered OK, how long it took, whether the budget ended it. */
  public record Outcome(int answered, long nanos, boolean outOfTime) {}

  /**
   * Makes the calls, in turn (the kinds in rotation), until {@code calls} are answered or the
   * budget is spent: no call starts after {@code budgetNanos}. Each call has a deadline of what is
   * left of the budget plus {@code graceNanos}, so a server that stops answering ends the warm-up
   * then; a call that fails ends it with a {@link StatusRuntimeException}.
   */
  public static Outcome run(
      Path socket,
      List<ApiAdapter.WarmUpCall> kinds,
      int calls,
      long budgetNanos,
      long graceNanos,
      EventLoopGroup group) {
    ManagedChannel channel = UdsChannels.open(socket, group);
    long start = System.nanoTime();
    int answered = 0;
    try {
      while (answered < calls) {
        long left = budgetNanos - (System.nanoTime() - start);
        if (left <= 0) {
          return new Outcome(answered, System.nanoTime() - start, true);
        }
        ApiAdapter.WarmUpCall kind = kinds.get(answered % kinds.size());
        CompletableFuture<byte[]> answer = new CompletableFuture<>();
        UdsChannels.start(channel, kind.method(), kind.request(), left + graceNanos, answer);
        try {
          answer.get();
        } catch (ExecutionException e) {
          throw Status.fromThrowable(e.getCause()).asRuntimeException();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return new Outcome(answered, System.nanoTime() - start, true);
        }
        answered++;
      }
      return new Outcome(answered, System.nanoTime() - start, false);
    } finally {
      channel.shutdownNow();
    }
  }
}
