package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.testkit.KubeletEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The fake kubelet's event listener that timestamps, with {@link System#nanoTime()}, the first
 * accepted {@code Register} and the first device list of each resource. Listeners run synchronously
 * when the fake records an event, so the timestamps are taken when the kubelet side has done the
 * work (the event's own {@code Instant} is not used: it is wall-clock time).
 */
final class KubeletClock implements Consumer<KubeletEvent> {

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Map<String, Long> registered = new HashMap<>();
  private final Map<String, Long> listed = new HashMap<>();
  private final List<Long> registrationOrder = new ArrayList<>();
  private final Map<String, Long> registeredCpu = new HashMap<>();
  private volatile long pid = -1;

  /**
   * Reads the plugin process's CPU time when each resource is first registered (call right after
   * the process started).
   *
   * @param pid the plugin process
   */
  void watchCpu(long pid) {
    this.pid = pid;
  }

  @Override
  public void accept(KubeletEvent e) {
    long now = System.nanoTime();
    if (e.outcome() != KubeletEvent.Outcome.OK) {
      return;
    }
    lock.lock();
    try {
      if (e.kind() == KubeletEvent.Kind.REGISTER && !registered.containsKey(e.resource())) {
        registered.put(e.resource(), now);
        if (pid > 0) {
          registeredCpu.put(e.resource(), ProcStatus.cpuNanos(pid));
        }
        registrationOrder.add(now);
        changed.signalAll();
      } else if (e.kind() == KubeletEvent.Kind.LIST_AND_WATCH
          && !listed.containsKey(e.resource())) {
        listed.put(e.resource(), now);
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** nanoTime of the resource's first accepted registration. */
  long awaitRegistered(String resource, JavaProcess p, Duration timeout)
      throws InterruptedException {
    return await(registered, resource, "registered " + resource, p, timeout);
  }

  /**
   * The plugin's CPU time (user + system) when the kubelet first accepted the resource's
   * registration; call after {@link #awaitRegistered}.
   *
   * @return nanoseconds, 10 ms resolution; -1 when unknown
   */
  long cpuAtRegistration(String resource) {
    lock.lock();
    try {
      return registeredCpu.getOrDefault(resource, -1L);
    } finally {
      lock.unlock();
    }
  }

  /** nanoTime of the resource's first device list received. */
  long awaitListed(String resource, JavaProcess p, Duration timeout) throws InterruptedException {
    return await(listed, resource, "received the device list of " + resource, p, timeout);
  }

  /**
   * nanoTime of the {@code n}-th distinct resource registered.
   *
   * @param n 1-based
   */
  long awaitRegistrations(int n, JavaProcess p, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (registrationOrder.size() < n) {
        waitSlice(
            deadline,
            p,
            "the kubelet registered " + n + " resources (" + registrationOrder.size() + " so far)");
      }
      return registrationOrder.get(n - 1);
    } finally {
      lock.unlock();
    }
  }

  private long await(
      Map<String, Long> times, String resource, String what, JavaProcess p, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (!times.containsKey(resource)) {
        waitSlice(deadline, p, "the kubelet " + what);
      }
      return times.get(resource);
    } finally {
      lock.unlock();
    }
  }

  /** Waits for a change at most 50 ms, failing when the process died or the deadline passed. */
  private void waitSlice(long deadline, JavaProcess p, String what) throws InterruptedException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new IllegalStateException(
          "timed out waiting until " + what + " (pid " + p.pid() + ")\n" + p.logTail(30));
    }
    p.checkAlive("see that " + what);
    changed.await(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)), TimeUnit.NANOSECONDS);
  }
}
