package io.github.deviceplugin4j.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/** Keeps every observer event, in order, and waits for the ones a test expects. */
final class RecordingObserver implements PluginObserver {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  final List<Object> events = new CopyOnWriteArrayList<>();

  @Override
  public void onRpc(Rpc rpc) {
    events.add(rpc);
  }

  @Override
  public void onRegistration(Registration registration) {
    events.add(registration);
  }

  @Override
  public void onStreamOpened(String resourceName, int openStreams) {
    events.add(new StreamOpened(resourceName, openStreams));
  }

  @Override
  public void onDeviceListSent(DeviceListSent sent) {
    events.add(sent);
  }

  @Override
  public void onDiscovery(Discovery discovery) {
    events.add(discovery);
  }

  /** {@link #onStreamOpened} as an event. */
  record StreamOpened(String resourceName, int openStreams) {}

  /** Events of a type, in order. */
  <T> List<T> all(Class<T> type) {
    return events.stream().filter(type::isInstance).map(type::cast).toList();
  }

  /** Waits for an event of a type that matches, and returns it. */
  <T> T await(Class<T> type, Predicate<T> matches) {
    return org.awaitility.Awaitility.await()
        .atMost(WAIT)
        .until(() -> all(type).stream().filter(matches).findFirst().orElse(null), e -> e != null);
  }

  /** Waits for an RPC of a method. */
  Rpc awaitRpc(Method method, Predicate<Rpc> matches) {
    return await(Rpc.class, r -> r.method() == method && matches.test(r));
  }

  /** Waits until no event of a type matches more than the count, for checks of "only once". */
  <T> long count(Class<T> type, Predicate<T> matches) {
    return all(type).stream().filter(matches).count();
  }
}
