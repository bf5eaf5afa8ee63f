package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The fake kubelet's journal: the numbered event log, marks, the availability samples behind {@link
 * FakeKubelet#unhealthyWindows(String, Mark)}, and blocking waits on any of it.
 *
 * <p>Thread-safe. Its {@link #lock()} is the fake kubelet's state lock: the other parts (the
 * device-manager model, the pods, the registrars) guard their own state with it too, so a step that
 * changes state and records its events is one step for every observer (a test that sees an event
 * also sees all of its effects and the events recorded with it), and a listener may query the fake.
 * A wait runs its probe under the lock and sleeps until the next {@link #record} or {@link
 * #touch()}; every part records or touches after a change, so a waiter never sleeps through one.
 */
final class EventJournal {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());

  private final String title;
  private final LongSupplier nanoTime;
  private final Supplier<Instant> wallClock;
  private final List<Consumer<KubeletEvent>> listeners;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  // Guarded by lock.
  private final List<KubeletEvent> events = new ArrayList<>();
  private final Map<String, List<HealthPoint>> health = new HashMap<>();
  private long seq;

  /**
   * A journal.
   *
   * @param title what the event log's first line names (the plugin directory)
   * @param nanoTime the monotonic clock for {@link KubeletEvent#nanos()} and marks
   * @param wallClock the clock for {@link KubeletEvent#time()}
   * @param listeners called for every event, in order, under the journal's lock
   */
  EventJournal(
      String title,
      LongSupplier nanoTime,
      Supplier<Instant> wallClock,
      List<Consumer<KubeletEvent>> listeners) {
    this.title = title;
    this.nanoTime = nanoTime;
    this.wallClock = wallClock;
    this.listeners = List.copyOf(listeners);
  }

  /**
   * The lock that guards the journal and, shared, the state of the parts that record into it.
   *
   * @return the lock
   */
  ReentrantLock lock() {
    return lock;
  }

  /** A journal on the system clocks. */
  static EventJournal system(String title, List<Consumer<KubeletEvent>> listeners) {
    return new EventJournal(title, System::nanoTime, Instant::now, listeners);
  }

  /** The journal's wall clock. */
  Instant now() {
    return wallClock.get();
  }

  KubeletEvent record(Kind kind, String resource, Outcome outcome, String detail) {
    return record(kind, resource, outcome, detail, Facts.NONE);
  }

  KubeletEvent record(Kind kind, String resource, Outcome outcome, String detail, Facts f) {
    lock.lock();
    try {
      KubeletEvent e =
          new KubeletEvent(
              ++seq,
              nanoTime.getAsLong(),
              wallClock.get(),
              kind,
              resource,
              outcome,
              detail,
              f.devices,
              f.healthy,
              f.bytes,
              f.endpoint,
              f.version,
              f.allocatable);
      events.add(e);
      changed.signalAll();
      for (Consumer<KubeletEvent> l : listeners) {
        try {
          l.accept(e);
        } catch (RuntimeException ex) {
          // a listener must not break the kubelet
        }
      }
      return e;
    } finally {
      lock.unlock();
    }
  }

  /** Wakes the waiters after a state change that records no event. */
  void touch() {
    lock.lock();
    try {
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The current position.
   *
   * @return a mark: everything recorded later is after it
   */
  Mark mark() {
    lock.lock();
    try {
      return new Mark(seq, nanoTime.getAsLong(), wallClock.get());
    } finally {
      lock.unlock();
    }
  }

  List<KubeletEvent> events() {
    lock.lock();
    try {
      return List.copyOf(events);
    } finally {
      lock.unlock();
    }
  }

  List<KubeletEvent> events(Mark since) {
    lock.lock();
    try {
      return List.copyOf(afterLocked(since));
    } finally {
      lock.unlock();
    }
  }

  private List<KubeletEvent> afterLocked(Mark since) {
    // seq n is at index n - 1.
    int from = (int) Math.min(since.seq(), events.size());
    return events.subList(from, events.size());
  }

  private KubeletEvent firstMatching(Mark after, Predicate<KubeletEvent> condition) {
    lock.lock();
    try {
      for (KubeletEvent e : after == null ? events : afterLocked(after)) {
        if (condition.test(e)) {
          return e;
        }
      }
      return null;
    } finally {
      lock.unlock();
    }
  }

  /** Waits for the first matching event after a mark (any event when {@code after} is null). */
  KubeletEvent awaitEvent(Mark after, Predicate<KubeletEvent> condition, Duration timeout) {
    return await(
        after == null
            ? "an event matching the condition"
            : "an event after #" + after.seq() + " matching the condition",
        timeout,
        () -> firstMatching(after, condition));
  }

  /**
   * Waits until {@code probe} returns a value. The probe runs under the lock, again after every
   * change; keep it quick.
   *
   * @throws AssertionError on timeout, with the event log
   */
  <T> T await(String what, Duration timeout, Supplier<T> probe) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (true) {
        T value = probe.get();
        if (value != null) {
          return value;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(
              "timed out after "
                  + timeout.toMillis()
                  + " ms waiting for "
                  + what
                  + "\n"
                  + eventLog());
        }
        changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for " + what, e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until {@code done} holds or the timeout passes, without failing.
   *
   * @return whether {@code done} held at the end
   */
  boolean awaitQuietly(Duration timeout, Supplier<Boolean> done) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (true) {
        if (done.get()) {
          return true;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Availability samples

  /**
   * Samples a resource's availability: records a {@link Kind#RESOURCE_HEALTH} event when
   * allocatable, capacity or the stop of its current endpoint changed since the last sample.
   */
  void sampleHealth(
      String resource,
      int allocatable,
      int capacity,
      boolean stopped,
      String endpoint,
      String cause) {
    lock.lock();
    try {
      List<HealthPoint> points = health.computeIfAbsent(resource, r -> new ArrayList<>());
      HealthPoint last = points.isEmpty() ? null : points.get(points.size() - 1);
      if (last != null
          && last.allocatable() == allocatable
          && last.capacity() == capacity
          && last.stopped() == stopped) {
        return;
      }
      KubeletEvent e =
          record(
              Kind.RESOURCE_HEALTH,
              resource,
              Outcome.INFO,
              "allocatable="
                  + allocatable
                  + " capacity="
                  + capacity
                  + (stopped ? " endpoint stopped" : "")
                  + ": "
                  + cause,
              Facts.of().allocatable(allocatable).devices(capacity).endpoint(endpoint));
      points.add(new HealthPoint(e.seq(), e.nanos(), allocatable, capacity, stopped, cause));
    } finally {
      lock.unlock();
    }
  }

  /** Forgets a resource's samples (the resource was removed: a new one starts afresh). */
  void forgetHealth(String resource) {
    lock.lock();
    try {
      health.remove(resource);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The stretches that began after a mark in which the resource could not take new pods, after it
   * had been available; the last may still be open.
   */
  List<UnhealthyWindow> unhealthyWindows(String resource, Mark since) {
    lock.lock();
    try {
      List<UnhealthyWindow> out = new ArrayList<>();
      boolean available = false;
      HealthPoint start = null;
      for (HealthPoint p : health.getOrDefault(resource, List.of())) {
        if (available && !p.available()) {
          start = p;
        } else if (!available && p.available() && start != null) {
          if (start.seq() > since.seq()) {
            out.add(window(resource, start, OptionalLong.of(p.seq()), OptionalLong.of(p.nanos())));
          }
          start = null;
        }
        available = p.available();
      }
      if (start != null && start.seq() > since.seq()) {
        out.add(window(resource, start, OptionalLong.empty(), OptionalLong.empty()));
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  private static UnhealthyWindow window(
      String resource, HealthPoint start, OptionalLong endSeq, OptionalLong endNanos) {
    return new UnhealthyWindow(
        resource, start.seq(), start.nanos(), endSeq, endNanos, start.cause());
  }

  /** The event log as text, one event per line. */
  String eventLog() {
    lock.lock();
    try {
      StringBuilder b = new StringBuilder("fake kubelet event log (").append(title).append("):");
      for (KubeletEvent e : events) {
        b.append("\n  #")
            .append(e.seq())
            .append(' ')
            .append(TIME.format(e.time()))
            .append(' ')
            .append(e.kind())
            .append(e.resource().isEmpty() ? "" : " " + e.resource())
            .append(' ')
            .append(e.outcome())
            .append(e.detail().isEmpty() ? "" : ": " + e.detail());
      }
      return b.toString();
    } finally {
      lock.unlock();
    }
  }

  /** One availability sample of a resource. */
  record HealthPoint(
      long seq, long nanos, int allocatable, int capacity, boolean stopped, String cause) {
    boolean available() {
      return allocatable > 0 && !stopped;
    }
  }
}
