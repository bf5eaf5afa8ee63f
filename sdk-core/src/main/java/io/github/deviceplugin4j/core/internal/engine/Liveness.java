package io.github.deviceplugin4j.core.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Checks that the engine's executors still run tasks: each gets a trivial task, and one that does
 * not run it within the bound is stuck. While a probe's task has not run, later checks wait for the
 * same task instead of queueing another, so a wedged executor does not collect probes.
 */
final class Liveness {

  /**
   * One executor to check; {@code name} says what is stuck when it fails (e.g. {@code control loop
   * of example.com/gpu}), {@code pending} holds the task that has not run yet, if any.
   */
  record Probe(String name, Executor executor, AtomicReference<CompletableFuture<Void>> pending) {

    Probe(String name, Executor executor) {
      this(name, executor, new AtomicReference<>());
    }

    /** The task that shows the executor runs: the one still pending, or a new one. */
    CompletableFuture<Void> ping() {
      CompletableFuture<Void> next = new CompletableFuture<>();
      CompletableFuture<Void> task = pending.updateAndGet(p -> p != null && !p.isDone() ? p : next);
      if (task == next) {
        try {
          executor.execute(() -> next.complete(null));
        } catch (RejectedExecutionException shuttingDown) {
          next.completeExceptionally(shuttingDown);
        }
      }
      return task;
    }
  }

  private Liveness() {}

  /**
   * Pings every probe and waits up to the bound for all of them; what is wrong with the stuck ones
   * (or those that refuse tasks), in probe order.
   */
  static List<String> stuck(List<Probe> probes, Duration bound) {
    List<CompletableFuture<Void>> pings = probes.stream().map(Probe::ping).toList();
    long deadline = System.nanoTime() + bound.toNanos();
    List<String> stuck = new ArrayList<>();
    for (int i = 0; i < probes.size(); i++) {
      try {
        pings.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        stuck.add(probes.get(i).name() + " did not run a task within " + bound.toMillis() + " ms");
      } catch (ExecutionException e) {
        stuck.add(probes.get(i).name() + " refuses tasks (shutting down)");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stuck.add(probes.get(i).name() + " was not checked (interrupted)");
      }
    }
    return stuck;
  }
}
