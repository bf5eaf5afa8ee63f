package io.github.deviceplugin4j.dra.internal;

import io.github.deviceplugin4j.api.drahealth.v1.DRAResourceHealthGrpc;
import io.github.deviceplugin4j.api.drahealth.v1.DeviceHealth;
import io.github.deviceplugin4j.api.drahealth.v1.DeviceIdentifier;
import io.github.deviceplugin4j.api.drahealth.v1.HealthStatus;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesRequest;
import io.github.deviceplugin4j.api.drahealth.v1.NodeWatchResourcesResponse;
import io.github.deviceplugin4j.dra.DraDeviceHealth;
import io.github.deviceplugin4j.dra.DraHealthSink;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams the driver's device health to every kubelet watch ({@code DRAResourceHealth}, v1 and
 * v1alpha1, whose messages are identical): the last complete list when a watch opens, every change,
 * and the last list again before the kubelet's health check timeout runs out (at half the smallest
 * timeout of the list, the kubelet's default of 30 s counting for devices without one). Without a
 * reporter, every watch ends with {@code UNIMPLEMENTED}, which tells the kubelet to stop watching.
 */
public final class HealthHub implements DraHealthSink, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HealthHub.class);

  /** The kubelet's health check timeout for a device that names none. */
  public static final Duration KUBELET_DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  /** The kubelet truncates longer messages. */
  static final int MAX_MESSAGE = 1024;

  private final boolean enabled;
  private final ScheduledExecutorService timer;
  private final Duration resendOverride;
  private final Set<Watch> watches = new CopyOnWriteArraySet<>();
  private NodeWatchResourcesResponse latest; // guarded by this
  private ScheduledFuture<?> resend; // guarded by this
  private boolean closed; // guarded by this

  /**
   * A hub.
   *
   * @param enabled whether the driver reports health at all
   * @param timer runs the re-sends
   * @param resendOverride a fixed re-send interval, or null to derive it from the timeouts
   */
  public HealthHub(boolean enabled, ScheduledExecutorService timer, Duration resendOverride) {
    this.enabled = enabled;
    this.timer = timer;
    this.resendOverride = resendOverride;
  }

  /**
   * The v1 and v1alpha1 services.
   *
   * @return the definitions to serve
   */
  public List<ServerServiceDefinition> definitions() {
    return List.of(new V1().bindService(), new V1Alpha1().bindService());
  }

  @Override
  public void publish(List<DraDeviceHealth> devices) {
    Objects.requireNonNull(devices, "devices");
    NodeWatchResourcesResponse message = toWire(devices);
    // Sends happen under the hub's lock, so no watch ever gets an older list after a newer one.
    synchronized (this) {
      if (closed || message.equals(latest)) {
        return; // not an effective change; the re-send keeps it fresh
      }
      latest = message;
      if (resend != null) {
        resend.cancel(false);
      }
      long every = resendInterval(devices).toNanos();
      resend = timer.scheduleAtFixedRate(this::resendLatest, every, every, TimeUnit.NANOSECONDS);
      watches.forEach(w -> w.send(message));
    }
  }

  private synchronized void resendLatest() {
    if (latest != null && !closed) {
      NodeWatchResourcesResponse message = latest;
      watches.forEach(w -> w.send(message));
    }
  }

  private Duration resendInterval(List<DraDeviceHealth> devices) {
    if (resendOverride != null) {
      return resendOverride;
    }
    Duration smallest = KUBELET_DEFAULT_TIMEOUT;
    for (DraDeviceHealth d : devices) {
      Duration t =
          d.healthCheckTimeout().isZero() ? KUBELET_DEFAULT_TIMEOUT : d.healthCheckTimeout();
      if (t.compareTo(smallest) < 0) {
        smallest = t;
      }
    }
    Duration half = smallest.dividedBy(2);
    return half.compareTo(Duration.ofMillis(500)) < 0 ? Duration.ofMillis(500) : half;
  }

  static NodeWatchResourcesResponse toWire(List<DraDeviceHealth> devices) {
    NodeWatchResourcesResponse.Builder out = NodeWatchResourcesResponse.newBuilder();
    for (DraDeviceHealth d : devices) {
      String message = d.message();
      if (message.length() > MAX_MESSAGE) {
        message = message.substring(0, MAX_MESSAGE - 3) + "...";
      }
      out.addDevices(
          DeviceHealth.newBuilder()
              .setDevice(
                  DeviceIdentifier.newBuilder()
                      .setPoolName(d.poolName())
                      .setDeviceName(d.deviceName()))
              .setHealth(
                  switch (d.status()) {
                    case HEALTHY -> HealthStatus.HEALTHY;
                    case UNHEALTHY -> HealthStatus.UNHEALTHY;
                    case UNKNOWN -> HealthStatus.UNKNOWN;
                  })
              .setLastUpdatedTime(d.lastUpdated().getEpochSecond())
              .setHealthCheckTimeoutSeconds(d.healthCheckTimeout().toSeconds())
              .setMessage(message));
    }
    return out.build();
  }

  /**
   * How many watches are open.
   *
   * @return the number of open health streams
   */
  public int watchCount() {
    return watches.size();
  }

  private <T> void watch(
      StreamObserver<T> observer, Function<NodeWatchResourcesResponse, T> convert) {
    if (!enabled) {
      observer.onError(
          Status.UNIMPLEMENTED
              .withDescription("this DRA driver does not report device health")
              .asRuntimeException());
      return;
    }
    ServerCallStreamObserver<T> out = (ServerCallStreamObserver<T>) observer;
    Watch w = new Watch(message -> out.onNext(convert.apply(message)), out::onCompleted);
    out.setOnCancelHandler(() -> watches.remove(w));
    synchronized (this) {
      if (closed) {
        out.onError(Status.UNAVAILABLE.withDescription("stopping").asRuntimeException());
        return;
      }
      watches.add(w);
      if (latest != null) {
        w.send(latest);
      }
    }
  }

  /** Ends every watch. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      if (resend != null) {
        resend.cancel(false);
      }
    }
    for (Watch w : watches) {
      w.end();
    }
    watches.clear();
  }

  /** One open stream; sends are serialized, and a failed one drops the watch. */
  private final class Watch {
    private final java.util.function.Consumer<NodeWatchResourcesResponse> sender;
    private final Runnable ender;
    private boolean done;

    Watch(java.util.function.Consumer<NodeWatchResourcesResponse> sender, Runnable ender) {
      this.sender = sender;
      this.ender = ender;
    }

    synchronized void send(NodeWatchResourcesResponse message) {
      if (done) {
        return;
      }
      try {
        sender.accept(message);
      } catch (RuntimeException e) {
        LOG.debug("health stream closed: {}", e.toString());
        done = true;
        watches.remove(this);
      }
    }

    synchronized void end() {
      if (done) {
        return;
      }
      done = true;
      try {
        ender.run();
      } catch (RuntimeException e) {
        LOG.debug("health stream already closed: {}", e.toString());
      }
    }
  }

  private final class V1 extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {
    @Override
    public void nodeWatchResources(
        NodeWatchResourcesRequest request, StreamObserver<NodeWatchResourcesResponse> out) {
      watch(out, m -> m);
    }
  }

  private final class V1Alpha1
      extends io.github.deviceplugin4j.api.drahealth.v1alpha1.DRAResourceHealthGrpc
          .DRAResourceHealthImplBase {
    @Override
    public void nodeWatchResources(
        io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesRequest request,
        StreamObserver<io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesResponse>
            out) {
      watch(
          out,
          m ->
              DraPluginServices.convert(
                  m,
                  io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesResponse
                      .parser()));
    }
  }
}
