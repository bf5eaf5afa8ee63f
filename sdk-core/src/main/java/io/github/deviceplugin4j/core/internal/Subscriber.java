package io.github.deviceplugin4j.core.internal;

import io.grpc.stub.ServerCallStreamObserver;
import java.util.function.Function;

/**
 * One ListAndWatch stream. Sends the newest snapshot whenever the stream can take a message;
 * snapshots that arrive while the kubelet is slow are coalesced into the newest one.
 *
 * @param <T> the wire message type of the stream's API version
 */
public final class Subscriber<T> {

  private final ServerCallStreamObserver<T> call;
  private final Function<Snapshot, T> encode;
  private final DeviceState state;
  private Snapshot latest;
  private Snapshot sent;
  private boolean done;

  private Subscriber(
      ServerCallStreamObserver<T> call, Function<Snapshot, T> encode, DeviceState state) {
    this.call = call;
    this.encode = encode;
    this.state = state;
  }

  /**
   * Attaches a new stream to a device state; the current list is sent at once.
   *
   * @param call the server side of the stream
   * @param encode the stream's wire message of a snapshot
   * @param state the device state
   * @param <T> the wire message type
   */
  public static <T> void attach(
      ServerCallStreamObserver<T> call, Function<Snapshot, T> encode, DeviceState state) {
    Subscriber<T> s = new Subscriber<>(call, encode, state);
    call.setOnCancelHandler(s::onCancel);
    call.setOnReadyHandler(s::drain);
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
    sent = latest;
    try {
      call.onNext(encode.apply(latest));
    } catch (RuntimeException closed) {
      done = true;
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
    }
  }

  private void onCancel() {
    synchronized (this) {
      done = true;
    }
    state.cancelled(this);
  }
}
