package io.github.deviceplugin4j.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A timer for deadline tests whose clock moves only when the test calls {@link #advance}: a
 * deadline fires because the test said so, never because the machine was slow. Only {@link
 * #schedule(Runnable, long, TimeUnit)}, the one method the core's deadlines use, is manual; due
 * tasks run on the thread that advances the clock.
 */
final class ManualTimer extends ScheduledThreadPoolExecutor {
  // Guarded by this.
  private long now;
  private final List<Task> pending = new ArrayList<>();
  private int scheduled;

  ManualTimer() {
    super(1);
  }

  @Override
  public synchronized ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    if (isShutdown()) {
      throw new RejectedExecutionException("the manual timer is shut down");
    }
    Task t = new Task(command, now + unit.toNanos(delay));
    pending.add(t);
    scheduled++;
    return t;
  }

  /**
   * Moves the clock forward and runs every task that falls due, earliest first, on this thread.
   *
   * @return how many tasks ran
   */
  int advance(Duration by) {
    List<Task> due;
    synchronized (this) {
      now += by.toNanos();
      due =
          pending.stream()
              .filter(t -> t.at <= now)
              .sorted(Comparator.comparingLong(t -> t.at))
              .toList();
      pending.removeAll(due);
    }
    due.forEach(Task::run);
    return due.size();
  }

  /** Tasks scheduled and neither run nor cancelled yet. */
  synchronized int pending() {
    return pending.size();
  }

  /** Tasks ever scheduled. */
  synchronized int scheduled() {
    return scheduled;
  }

  private final class Task extends FutureTask<Void> implements ScheduledFuture<Void> {
    final long at;

    Task(Runnable command, long at) {
      super(command, null);
      this.at = at;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      synchronized (ManualTimer.this) {
        return unit.convert(at - now, TimeUnit.NANOSECONDS);
      }
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      synchronized (ManualTimer.this) {
        pending.remove(this);
      }
      return cancelled;
    }
  }
}
