package io.github.deviceplugin4j.core;

import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** Collects a ListAndWatch stream as lists of "id:health" strings. */
final class StreamCollector
    implements ClientResponseObserver<
        io.github.deviceplugin4j.api.v1beta1.Empty, ListAndWatchResponse> {

  final BlockingQueue<List<String>> messages = new LinkedBlockingQueue<>();
  final AtomicReference<Throwable> error = new AtomicReference<>();
  volatile boolean completed;
  private volatile ClientCallStreamObserver<?> call;

  static List<String> view(ListAndWatchResponse r) {
    return r.getDevicesList().stream()
        .map(
            d ->
                d.getID()
                    + ":"
                    + d.getHealth()
                    + (d.hasTopology() && d.getTopology().getNodesCount() > 0
                        ? ":numa" + d.getTopology().getNodes(0).getID()
                        : ""))
        .toList();
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<io.github.deviceplugin4j.api.v1beta1.Empty> c) {
    this.call = c;
  }

  @Override
  public void onNext(ListAndWatchResponse value) {
    messages.add(view(value));
  }

  @Override
  public void onError(Throwable t) {
    error.set(t);
  }

  @Override
  public void onCompleted() {
    completed = true;
  }

  /** The next message, failing the test after the timeout. */
  List<String> next(Duration timeout) throws InterruptedException {
    List<String> m = messages.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (m == null) {
      throw new AssertionError("no ListAndWatch message within " + timeout);
    }
    return m;
  }

  void cancel() {
    call.cancel("test cancels", null);
  }
}
