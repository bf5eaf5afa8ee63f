package io.github.deviceplugin4j.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The blocking waits of {@link FakeKubelet} on the parts' state: registrations, device lists,
 * disconnections and the DRA side. Each probe runs under the journal's lock, again after every
 * change, so a wait sees each state the parts pass through; on timeout it fails with the event log
 * (see {@link EventJournal#await}).
 */
final class KubeletAwaits {
  private final EventJournal journal;
  private final DeviceManagerModel model;
  private final DraPluginManager dra;

  KubeletAwaits(EventJournal journal, DeviceManagerModel model, DraPluginManager dra) {
    this.journal = journal;
    this.model = model;
    this.dra = dra;
  }

  /** The resource's first registration accepted after the mark (any one when it is null). */
  Registration registration(String resource, Mark after, Duration timeout) {
    return first(
        "a registration of " + resource + afterEvent(after),
        timeout,
        model::registrations,
        r -> r.resourceName().equals(resource) && (after == null || r.isAfter(after)));
  }

  /** The resource's first registration at or after the instant (racy: see the caller). */
  Registration registrationAfter(String resource, Instant after, Duration timeout) {
    return first(
        "a registration of " + resource + " at or after " + after,
        timeout,
        model::registrations,
        r -> r.resourceName().equals(resource) && !r.at().isBefore(after));
  }

  /** The resource's first device list, current or future, that satisfies the condition. */
  List<DeviceState> devices(
      String resource, Predicate<List<DeviceState>> condition, Duration timeout) {
    return matching(
        "a device list of " + resource, timeout, () -> model.devices(resource), condition);
  }

  /** Waits, without failing, until no resource is connected; returns those still connected. */
  List<String> allDisconnected(Duration timeout) {
    journal.awaitQuietly(timeout, () -> model.connectedResources().isEmpty());
    return model.connectedResources();
  }

  /** The driver's first DRA registration accepted after the mark (any one when it is null). */
  DraRegistration draRegistration(String driver, Mark after, Duration timeout) {
    return first(
        "a DRA registration of " + driver + afterEvent(after),
        timeout,
        dra::registrations,
        r -> r.driver().equals(driver) && (after == null || r.isAfter(after)));
  }

  /** The driver's first device health list, current or future, that satisfies the condition. */
  List<DraDeviceHealth> draDeviceHealth(
      String driver, Predicate<List<DraDeviceHealth>> condition, Duration timeout) {
    return matching(
        "DRA device health of " + driver, timeout, () -> dra.deviceHealth(driver), condition);
  }

  private static String afterEvent(Mark after) {
    return after == null ? "" : " after event #" + after.seq();
  }

  /** Waits until a list, as it is after each change, satisfies the condition. */
  private <T> List<T> matching(
      String what, Duration timeout, Supplier<List<T>> list, Predicate<List<T>> condition) {
    return await(
        what + " matching the condition",
        timeout,
        () -> {
          List<T> current = list.get();
          return condition.test(current) ? current : null;
        });
  }

  /** Waits for the first element of a list, as it is after each change, that matches. */
  private <T> T first(
      String what, Duration timeout, Supplier<List<T>> list, Predicate<? super T> matches) {
    return await(what, timeout, () -> list.get().stream().filter(matches).findFirst().orElse(null));
  }

  private <T> T await(String what, Duration timeout, Supplier<T> probe) {
    return journal.await(what, timeout, () -> model.locked(probe));
  }
}
