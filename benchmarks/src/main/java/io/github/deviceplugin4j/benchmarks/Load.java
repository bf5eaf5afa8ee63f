package io.github.deviceplugin4j.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** Runs a call from several threads at once and records the latency of every call. */
public final class Load {

  /** One call; {@code i} is its index within the block. */
  @FunctionalInterface
  public interface Call {
    /**
     * Makes call number {@code i}.
     *
     * @param i index
     * @throws Exception when it fails: the block fails
     */
    void call(int i) throws Exception;
  }

  private Load() {}

  /**
   * Makes {@code calls} calls from {@code threads} threads (each takes the next index until none is
   * left) and stores each call's latency at {@code latencies[offset + i]}.
   *
   * @param threads concurrency
   * @param calls how many calls
   * @param call the call
   * @param latencies where latencies go, null to discard them
   * @param offset first slot
   * @return wall time of the block in nanoseconds, from the common start to the last call's end
   * @throws Exception the first failure of any call
   */
  public static long run(int threads, int calls, Call call, long[] latencies, int offset)
      throws Exception {
    AtomicInteger next = new AtomicInteger();
    AtomicReference<Exception> failure = new AtomicReference<>();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>(threads);
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try {
                  go.await();
                  int i;
                  while (failure.get() == null && (i = next.getAndIncrement()) < calls) {
                    long t0 = System.nanoTime();
                    call.call(i);
                    long took = System.nanoTime() - t0;
                    if (latencies != null) {
                      latencies[offset + i] = took;
                    }
                  }
                } catch (Exception e) {
                  failure.compareAndSet(null, e);
                }
              },
              "bench-load-" + t);
      w.setDaemon(true);
      w.start();
      workers.add(w);
    }
    long start = System.nanoTime();
    go.countDown();
    for (Thread w : workers) {
      w.join();
    }
    long wall = System.nanoTime() - start;
    if (failure.get() != null) {
      throw failure.get();
    }
    return wall;
  }
}
