package io.github.deviceplugin4j.core.internal;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared executor. Each resource has one, so
 * its state changes without locks while resources proceed in parallel.
 */
public final class SerialExecutor implements Executor {

  private static final Logger LOG = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor delegate;
  private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
  private boolean running;

  /** A serial executor whose tasks run on the shared {@code delegate}. */
  public SerialExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (queue) {
      queue.add(task);
      if (running) {
        return;
      }
      running = true;
    }
    try {
      delegate.execute(this::drain);
    } catch (RuntimeException rejected) {
      synchronized (queue) {
        queue.clear();
        running = false;
      }
      LOG.debug("task rejected (shutting down): {}", rejected.toString());
    }
  }

  private void drain() {
    while (true) {
      Runnable next;
      synchronized (queue) {
        next = queue.poll();
        if (next == null) {
          running = false;
          return;
        }
      }
      try {
        next.run();
      } catch (RuntimeException e) {
        LOG.error("unexpected error in deviceplugin4j task", e);
      } catch (Error e) {
        // Fatal: it ends this thread, whose uncaught exception handler (the engine's) reports it.
        // Later tasks may still be queued and run meanwhile.
        synchronized (queue) {
          running = false;
        }
        throw e;
      }
    }
  }
}
