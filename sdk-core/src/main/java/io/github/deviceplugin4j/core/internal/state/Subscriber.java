package io.github.deviceplugin4j.core.internal.state;

import io.github.deviceplugin4j.core.PluginObserver;
import io.github.deviceplugin4j.core.internal.Observers;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * One ListAndWatch stream. Sends the newest snapshot whenever the stream can take a message;
 * snapshots that arrive while the kubelet is slow are coalesced into the newest one. {@code T} is
 * the wire message type of the stream's API version.
 */
public final class Subscriber<T> {

  private final ServerCallStreamObserver<T> call;
  private final Function<Snapshot, T> encode;
  private final ToIntFunction<Snapshot> size;
  private final DeviceState state;
  private final long openedNanos;
  private Snapshot latest;
  private Snapshot sent;
  private boolean done;
  private boolean reported;

  private Subscriber(
      ServerCallStreamObserver<T> call,
      Function<Snapshot, T> encode,
      ToIntFunction<Snapshot> size,
      DeviceState state) {
    this.call = call;
    this.encode = encode;
    this.size = size;
    this.state = state;
    this.openedNanos = state.observers().enabled() ? System.nanoTime() : 0;
  }

  /**
   * Attaches a new stream to a device state; the current list is sent at once. {@code encode} makes
   * the stream's wire message of a snapshot, {@code size} tells its encoded size to the observers.
   */
  public static <T> void attach(
      ServerCallStreamObserver<T> call,
      Function<Snapshot, T> encode,
      ToIntFunction<Snapshot> size,
      DeviceState state) {
    Subscriber<T> s = new Subscriber<>(call, encode, size, state);
    call.setOnCancelHandler(s::onCancel);
    call.setOnReadyHandler(s::drain);
    Observers observers = state.observers();
    if (observers.enabled()) {
      observers.streamOpened(state.resource(), state.streams() + 1);
    }
    state.add(s);
  }

  synchronized void offer(Snapshot snapshot) {
    if (latest == null || snapshot.sequence() > latest.sequence()) {
      latest = snapshot;
    }
    drain();
  }

  private synchronized void drain() {
    if (done || latest == null || latest == sent || !call.isReady()) {
      return;
    }
    Snapshot next = latest;
    sent = next;
    try {
      call.onNext(encode.apply(next));
    } catch (RuntimeException closed) {
      done = true;
      return;
    }
    Observers observers = state.observers();
    if (observers.enabled()) {
      int healthy = next.healthy();
      observers.deviceListSent(
          new PluginObserver.DeviceListSent(
              state.resource(),
              healthy,
              next.devices().size() - healthy,
              size.applyAsInt(next),
              state.streams()));
    }
  }

  synchronized void complete() {
    if (!done) {
      done = true;
      try {
        call.onCompleted();
      } catch (RuntimeException alreadyClosed) {
        // the call ended on the kubelet's side meanwhile
      }
      ended("OK");
    }
  }

  private void onCancel() {
    synchronized (this) {
      done = true;
    }
    state.cancelled(this);
    ended("CANCELLED");
  }

  /** Reports the stream's end once, with its whole lifetime. */
  private void ended(String code) {
    Observers observers = state.observers();
    if (!observers.enabled()) {
      return;
    }
    synchronized (this) {
      if (reported) {
        return;
      }
      reported = true;
    }
    observers.rpc(
        new PluginObserver.Rpc(
            state.resource(),
            PluginObserver.Method.LIST_AND_WATCH,
            code,
            System.nanoTime() - openedNanos,
            0));
  }
}
