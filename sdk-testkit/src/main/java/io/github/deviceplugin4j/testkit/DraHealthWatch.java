package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The kubelet's DRA health watch ({@code DRAResourceHealth}): one {@code NodeWatchResources} stream
 * per registered plugin, re-opened after it ends, and the last health reported for each device of
 * each driver. Owns the streams and the health; which plugins exist is the {@link
 * DraPluginStore}'s. Its state is guarded by the journal's lock.
 */
final class DraHealthWatch {
  /** The kubelet re-opens an ended health stream after this period ({@code wait.Until}). */
  static final Duration HEALTH_RETRY_PERIOD = Duration.ofSeconds(5);

  private final UdsTransport transport;
  private final EventJournal journal;
  private final ReentrantLock lock;
  private final Optional<String> healthService;
  // Guarded by lock.
  private final Map<DraPlugin, Stream> streams = new IdentityHashMap<>();
  private final Map<String, Map<String, DraDeviceHealth>> health = new LinkedHashMap<>();
  private boolean closed;

  /** The health stream of one plugin, across its re-opens. */
  private static final class Stream {
    final DraPlugin plugin;
    // Guarded by lock.
    ClientCallStreamObserver<?> call;
    ScheduledFuture<?> retry;
    boolean stopped;
    boolean unimplementedSeen;

    Stream(DraPlugin plugin) {
      this.plugin = plugin;
    }
  }

  DraHealthWatch(UdsTransport transport, EventJournal journal, Optional<String> healthService) {
    this.transport = transport;
    this.journal = journal;
    this.lock = journal.lock();
    this.healthService = healthService;
  }

  /** Under lock: watches a newly registered plugin's devices, if this kubelet watches health. */
  void watch(DraPlugin p) {
    if (healthService.isEmpty()) {
      return;
    }
    Stream s = new Stream(p);
    streams.put(p, s);
    open(s);
  }

  /** Under lock: the plugin is gone; cancels its health stream and any pending re-open. */
  void stop(DraPlugin p) {
    Stream s = streams.remove(p);
    if (s == null) {
      return;
    }
    s.stopped = true;
    if (s.retry != null) {
      s.retry.cancel(false);
    }
    if (s.call != null) {
      s.call.cancel("DRA plugin removed", null);
    }
  }

  /** A kubelet restart: the health reported so far is forgotten. */
  void kubeletRestarted() {
    lock.lock();
    try {
      health.clear();
    } finally {
      lock.unlock();
    }
  }

  /** No stream is opened or re-opened after this. */
  void close() {
    lock.lock();
    try {
      closed = true;
    } finally {
      lock.unlock();
    }
  }

  List<DraDeviceHealth> deviceHealth(String driver) {
    lock.lock();
    try {
      return List.copyOf(health.getOrDefault(driver, Map.of()).values());
    } finally {
      lock.unlock();
    }
  }

  private void open(Stream s) {
    if (s.stopped || closed) {
      return;
    }
    DraPlugin p = s.plugin;
    String which = healthService.orElseThrow();
    DraHealthStreams.Sink observer =
        new DraHealthStreams.Sink() {
          @Override
          public void started(ClientCallStreamObserver<?> call) {
            lock.lock();
            try {
              s.call = call;
            } finally {
              lock.unlock();
            }
          }

          @Override
          public void onNext(List<DraDeviceHealth> devices) {
            received(s, devices);
          }

          @Override
          public void onError(Throwable t) {
            ended(s, Status.fromThrowable(t));
          }

          @Override
          public void onCompleted() {
            ended(s, Status.OK);
          }
        };
    DraHealthStreams.open(which, p.channel, p.driver, journal::now, observer);
  }

  private void received(Stream s, List<DraDeviceHealth> devices) {
    lock.lock();
    try {
      if (s.stopped) {
        return;
      }
      DraPlugin p = s.plugin;
      Map<String, DraDeviceHealth> byDevice =
          health.computeIfAbsent(p.driver, d -> new LinkedHashMap<>());
      long unhealthy = 0;
      for (DraDeviceHealth h : devices) {
        byDevice.put(h.poolName() + "/" + h.deviceName(), h);
        if (h.status() == DraDeviceHealth.Status.UNHEALTHY) {
          unhealthy++;
        }
      }
      journal.record(
          Kind.DRA_HEALTH,
          p.driver,
          Outcome.OK,
          devices.size() + " devices (" + unhealthy + " unhealthy): " + describe(devices),
          Facts.of().devices(devices.size()).endpoint(p.endpoint));
    } finally {
      lock.unlock();
    }
  }

  private static String describe(List<DraDeviceHealth> devices) {
    List<String> parts = new ArrayList<>();
    for (DraDeviceHealth h : devices) {
      parts.add(
          h.poolName()
              + "/"
              + h.deviceName()
              + "="
              + h.status()
              + (h.message().isEmpty() ? "" : " (" + h.message() + ")"));
    }
    return String.join(", ", parts);
  }

  private void ended(Stream s, Status status) {
    lock.lock();
    try {
      s.call = null;
      if (s.stopped || closed) {
        return;
      }
      DraPlugin p = s.plugin;
      if (status.getCode() == Status.Code.UNIMPLEMENTED) {
        if (!s.unimplementedSeen) {
          s.unimplementedSeen = true;
          journal.record(
              Kind.DRA_HEALTH,
              p.driver,
              Outcome.INFO,
              "the driver does not serve "
                  + healthService.orElse("")
                  + " (UNIMPLEMENTED): accepted, no health for its devices",
              Facts.of().endpoint(p.endpoint));
        }
      } else {
        journal.record(
            Kind.DRA_HEALTH,
            p.driver,
            Outcome.INFO,
            "NodeWatchResources ended: "
                + PluginConnector.describe(status)
                + "; re-opened in "
                + HEALTH_RETRY_PERIOD.toSeconds()
                + " s",
            Facts.of().endpoint(p.endpoint));
      }
      s.retry =
          transport
              .scheduler()
              .schedule(
                  () -> {
                    lock.lock();
                    try {
                      open(s);
                    } finally {
                      lock.unlock();
                    }
                  },
                  HEALTH_RETRY_PERIOD.toNanos(),
                  TimeUnit.NANOSECONDS);
    } finally {
      lock.unlock();
    }
  }
}
