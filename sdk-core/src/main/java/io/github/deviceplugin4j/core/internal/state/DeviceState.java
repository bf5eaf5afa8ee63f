package io.github.deviceplugin4j.core.internal.state;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.InvalidBackendDataException;
import io.github.deviceplugin4j.core.Sharing;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Observers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;

/**
 * The device list of one resource and the ListAndWatch streams that watch it.
 *
 * <p>Snapshots may be published from any thread at any rate: the latest one wins, it is validated
 * (bad devices dropped and reported), identical lists are not re-sent, a list over the kubelet's
 * message limit is refused while the last good one stays, and every stream receives each effective
 * change once, at its own pace. Bursts are coalesced: a change that follows another one within the
 * coalescing window waits for the window's end, and then only the newest list is sent; an isolated
 * change is sent at once.
 */
public final class DeviceState {

  /** The kubelet's default gRPC receive limit, which a ListAndWatch message must not exceed. */
  public static final int KUBELET_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

  /** What the state tells its resource. */
  public interface Events {
    /** Some published devices were dropped. */
    void invalidDevices(InvalidBackendDataException error);

    /** A published list was refused because it is too large; the last good list stays. */
    void tooLarge(InvalidBackendDataException error);

    /** The list the kubelet sees changed. */
    void changed(Snapshot snapshot);

    /** The kubelet cancelled the last open stream. */
    void streamsGone();
  }

  private static final Logger LOG = Loggers.resource();

  private final List<DeviceListEncoder> adapters;
  private final Executor serial;
  private final ScheduledExecutorService timer;
  private final long windowNanos;
  private final int maxMessageBytes;
  private final Events events;
  private final String resource;
  private final Observers observers;
  private final Sharing sharing;
  private final AtomicReference<List<Device>> pending = new AtomicReference<>();
  private final AtomicLong sequence = new AtomicLong();
  private final Set<Subscriber<?>> subscribers = ConcurrentHashMap.newKeySet();
  private volatile Snapshot current;
  private volatile boolean closed;
  private volatile long lastChangeNanos = System.nanoTime() - Long.MAX_VALUE / 2;
  private volatile long streamlessSince = System.nanoTime();

  /**
   * A device state whose streams are observed and whose devices may be shared (null {@code
   * sharing}: not shared). Snapshots are processed on {@code serial}, one at a time; {@code timer}
   * delays them within the coalescing {@code window}.
   */
  public DeviceState(
      List<? extends DeviceListEncoder> adapters,
      Executor serial,
      ScheduledExecutorService timer,
      Duration window,
      int maxMessageBytes,
      Events events,
      String resource,
      Observers observers,
      Sharing sharing) {
    this.sharing = sharing == null ? Sharing.none() : sharing;
    this.resource = resource;
    this.observers = observers;
    this.adapters = List.copyOf(adapters);
    this.serial = serial;
    this.timer = timer;
    this.windowNanos = window.toNanos();
    this.maxMessageBytes = maxMessageBytes;
    this.events = events;
    this.current = Snapshot.of(0, List.of(), adapters);
  }

  /** The list the kubelet sees now; never null. */
  public Snapshot current() {
    return current;
  }

  /** Publishes a complete device list; processed asynchronously, bursts coalesced. */
  public void publish(List<Device> devices) {
    List<Device> copy = new ArrayList<>(devices);
    if (pending.getAndSet(copy) == null) {
      long wait = lastChangeNanos + windowNanos - System.nanoTime();
      if (wait <= 0) {
        serial.execute(this::processPending);
      } else {
        try {
          timer.schedule(() -> serial.execute(this::processPending), wait, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException shuttingDown) {
          pending.set(null);
        }
      }
    }
  }

  /** Applies a complete device list right now, on the caller's thread (used once at start). */
  public void applyNow(List<Device> devices) {
    apply(new ArrayList<>(devices));
  }

  /** The resource name. */
  public String resource() {
    return resource;
  }

  /** Who is told about streams and device lists sent. */
  public Observers observers() {
    return observers;
  }

  /** Number of open ListAndWatch streams. */
  public int streams() {
    return subscribers.size();
  }

  void add(Subscriber<?> subscriber) {
    subscribers.add(subscriber);
    subscriber.offer(current);
    if (closed) {
      subscriber.complete();
    }
  }

  /**
   * When the last open stream ended ({@link System#nanoTime()}), or when this state was created;
   * meaningful while {@link #streams()} is 0.
   */
  public long streamlessSinceNanos() {
    return streamlessSince;
  }

  void cancelled(Subscriber<?> subscriber) {
    if (subscribers.remove(subscriber) && subscribers.isEmpty() && !closed) {
      streamlessSince = System.nanoTime();
      events.streamsGone();
    }
  }

  /** Ends every stream normally and stops processing snapshots. */
  public void close() {
    closed = true;
    subscribers.forEach(Subscriber::complete);
    subscribers.clear();
  }

  private void processPending() {
    List<Device> raw = pending.getAndSet(null);
    if (raw != null && !closed) {
      apply(raw);
    }
  }

  /** The most health changes logged one line each for one list; the rest are counted. */
  static final int MAX_HEALTH_LINES = 20;

  /**
   * Logs each physical device (not replica) whose health changed between two lists, once, in the
   * order of the new list, with its reason: {@code device "gpu1": Healthy -> Unhealthy (ECC
   * errors)}. A device that appears unhealthy counts as a change.
   */
  static void logHealthChanges(String resource, Snapshot previous, Snapshot next) {
    List<String> lines = new ArrayList<>();
    Map<String, Device> before = new java.util.HashMap<>();
    previous.physical().forEach(d -> before.put(d.id(), d));
    for (Device d : next.physical()) {
      Device old = before.get(d.id());
      Health was = old == null ? null : old.health();
      if (was == d.health() || (was == null && d.isHealthy())) {
        continue;
      }
      lines.add(
          "device \""
              + d.id()
              + "\": "
              + (was == null ? "(new)" : was.wireValue())
              + " -> "
              + d.health().wireValue()
              + (d.unhealthyReason().isEmpty() ? "" : " (" + d.unhealthyReason() + ")"));
    }
    lines.stream().limit(MAX_HEALTH_LINES).forEach(line -> LOG.info("{}: {}", resource, line));
    if (lines.size() > MAX_HEALTH_LINES) {
      LOG.info(
          "{}: ... and {} more device health changes", resource, lines.size() - MAX_HEALTH_LINES);
    }
  }

  private synchronized void apply(List<Device> raw) {
    Validation.DeviceCheck check = Validation.checkDevices(raw);
    Validation.DeviceCheck replicas = Validation.checkReplicaIds(check.accepted(), sharing);
    if (!check.problems().isEmpty() || !replicas.problems().isEmpty()) {
      List<String> problems = new ArrayList<>(check.problems());
      problems.addAll(replicas.problems());
      events.invalidDevices(new InvalidBackendDataException("devices", problems));
    }
    Snapshot previous = current;
    if (replicas.accepted().equals(previous.physical()) && previous.sequence() > 0) {
      return;
    }
    Snapshot next = Snapshot.of(sequence.incrementAndGet(), replicas.accepted(), sharing, adapters);
    if (next.maxEncodedSize() > maxMessageBytes) {
      events.tooLarge(
          new InvalidBackendDataException(
              "devices",
              List.of(
                  "the device list of "
                      + next.devices().size()
                      + " devices encodes to "
                      + next.maxEncodedSize()
                      + " bytes, over the kubelet's limit of "
                      + maxMessageBytes
                      + " bytes per message (kubernetes#109304); the last good list of "
                      + previous.devices().size()
                      + " devices stays")));
      return;
    }
    current = next;
    if (next.sameWire(previous) && previous.sequence() > 0) {
      return;
    }
    logHealthChanges(resource, previous, next);
    lastChangeNanos = System.nanoTime();
    subscribers.forEach(s -> s.offer(next));
    events.changed(next);
  }
}
