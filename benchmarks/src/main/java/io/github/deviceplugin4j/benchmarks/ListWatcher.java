package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.testkit.KubeletEvent;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Listens to the fake kubelet's events for one resource and notes, with {@link System#nanoTime()},
 * when it last received a device list (the listener runs in the kubelet's receive path, after the
 * list is decoded and stored).
 */
public final class ListWatcher implements Consumer<KubeletEvent> {

  private final String resource;
  private final AtomicLong lists = new AtomicLong();
  private volatile long lastListNanos;

  /**
   * Watches a resource.
   *
   * @param resource resource name
   */
  public ListWatcher(String resource) {
    this.resource = resource;
  }

  @Override
  public void accept(KubeletEvent e) {
    if (e.kind() == KubeletEvent.Kind.LIST_AND_WATCH
        && e.resource().equals(resource)
        && !e.failed()) {
      lastListNanos = System.nanoTime();
      lists.incrementAndGet();
    }
  }

  /**
   * Device lists received so far.
   *
   * @return count
   */
  public long lists() {
    return lists.get();
  }

  /**
   * When the last list was received.
   *
   * @return nano time
   */
  public long lastListNanos() {
    return lastListNanos;
  }
}
