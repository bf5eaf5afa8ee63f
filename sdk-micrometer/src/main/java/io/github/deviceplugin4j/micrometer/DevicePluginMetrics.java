package io.github.deviceplugin4j.micrometer;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.PluginListener;
import io.github.deviceplugin4j.core.PluginObserver;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Turns a device plugin's {@link PluginObserver} and {@link PluginListener} events into Micrometer
 * meters: RPC timers by method and status code, registration attempts, re-registrations, devices by
 * health, registered state, open ListAndWatch streams, the age of the last registration, discovery
 * runs, device list sends and errors. Every meter carries a {@code resource} tag; {@code
 * docs/operations.md} lists them all with their Prometheus names ({@code deviceplugin4j_...}).
 *
 * <p>One instance is both observer and listener of a host; {@link #bindTo} registers it as both:
 *
 * <pre>{@code
 * PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * DevicePluginHost.Builder host = DevicePluginHost.builder().backend(backend);
 * DevicePluginMetrics.of(registry).bindTo(host);
 * host.start();
 * }</pre>
 *
 * <p>Meters of a resource appear with its first event (its first discovery, before the plugin
 * serves), among them the {@code OK} timers of {@code GetDevicePluginOptions} and {@code Allocate}
 * and the {@code Allocate} device counter at 0; other methods and status codes appear with their
 * first call. Recording is lock-free and allocation-free on the hot path (the timers of each
 * resource, method and code are looked up once), so it may run on the gRPC event loop as the
 * observer contract asks. Thread-safe.
 */
public final class DevicePluginMetrics implements PluginObserver, PluginListener {

  /** Prefix of every meter name. */
  public static final String PREFIX = "deviceplugin4j.";

  private static final String OK = "OK";

  private final MeterRegistry registry;
  private final boolean percentileHistograms;
  private final Clock clock;
  private final Map<String, ResourceMeters> resources = new ConcurrentHashMap<>();

  private DevicePluginMetrics(Builder builder) {
    this.registry = builder.registry;
    this.percentileHistograms = builder.percentileHistograms;
    this.clock = registry.config().clock();
  }

  /**
   * Metrics with the defaults (no percentile histograms) in the given registry.
   *
   * @param registry where the meters go
   * @return the binding; pass it to the host builder's {@code observer(...)} and {@code
   *     listener(...)}
   */
  public static DevicePluginMetrics of(MeterRegistry registry) {
    return builder(registry).build();
  }

  /**
   * A builder for metrics in the given registry.
   *
   * @param registry where the meters go
   * @return a builder
   */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  /** Options of {@link DevicePluginMetrics}. */
  public static final class Builder {
    private final MeterRegistry registry;
    private boolean percentileHistograms;

    private Builder(MeterRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Whether the RPC timers publish percentile histograms (Prometheus {@code _bucket} series, for
     * {@code histogram_quantile}). Off by default: each timer then costs a few series instead of
     * about seventy.
     *
     * @param on true to publish them
     * @return this builder
     */
    public Builder percentileHistograms(boolean on) {
      this.percentileHistograms = on;
      return this;
    }

    /**
     * Builds the binding. No meter exists until the first event of a resource.
     *
     * @return the binding
     */
    public DevicePluginMetrics build() {
      return new DevicePluginMetrics(this);
    }
  }

  /**
   * Registers this as observer and listener of a host.
   *
   * @param host the host's builder
   * @return the same builder
   */
  public DevicePluginHost.Builder bindTo(DevicePluginHost.Builder host) {
    return host.observer(this).listener(this);
  }

  // ---- PluginObserver

  @Override
  public void onRpc(Rpc rpc) {
    ResourceMeters meters = meters(rpc.resourceName());
    if (rpc.method() == Method.LIST_AND_WATCH) {
      meters.streamEnded(rpc.code());
      return;
    }
    meters.rpc(rpc.method(), rpc.code()).record(rpc.nanos(), TimeUnit.NANOSECONDS);
    if (rpc.devices() > 0) {
      meters.requested(rpc.method()).increment(rpc.devices());
    }
  }

  @Override
  public void onRegistration(Registration registration) {
    meters(registration.resourceName())
        .registration(registration.mode(), registration.success())
        .record(registration.nanos(), TimeUnit.NANOSECONDS);
  }

  @Override
  public void onStreamOpened(String resourceName, int openStreams) {
    meters(resourceName).openStreams.set(openStreams);
  }

  @Override
  public void onDeviceListSent(DeviceListSent sent) {
    ResourceMeters meters = meters(sent.resourceName());
    meters.listSent.record(sent.bytes());
    meters.openStreams.set(sent.openStreams());
  }

  @Override
  public void onDiscovery(Discovery discovery) {
    ResourceMeters meters = meters(discovery.resourceName());
    (discovery.success() ? meters.discoveryOk : meters.discoveryFailed)
        .record(discovery.nanos(), TimeUnit.NANOSECONDS);
  }

  // ---- PluginListener

  @Override
  public void onRegistered(String resourceName, RegistrationMode mode, boolean reRegistration) {
    ResourceMeters meters = meters(resourceName);
    meters.registered.set(1);
    meters.lastRegistered = clock.monotonicTime();
    if (reRegistration) {
      meters.reRegistrations(mode).increment();
    }
  }

  @Override
  public void onKubeletLost(String resourceName) {
    ResourceMeters meters = meters(resourceName);
    meters.registered.set(0);
    meters.kubeletLost.increment();
  }

  @Override
  public void onDevicesChanged(String resourceName, int total, int healthy) {
    ResourceMeters meters = meters(resourceName);
    meters.healthy.set(healthy);
    meters.unhealthy.set(total - healthy);
  }

  @Override
  public void onError(String resourceName, DevicePluginException error) {
    meters(resourceName).error(error.getClass().getSimpleName()).increment();
  }

  @Override
  public void onStopped() {
    for (ResourceMeters meters : resources.values()) {
      meters.registered.set(0);
      meters.openStreams.set(0);
    }
  }

  private ResourceMeters meters(String resourceName) {
    ResourceMeters meters = resources.get(resourceName);
    return meters != null ? meters : resources.computeIfAbsent(resourceName, ResourceMeters::new);
  }

  /** The gRPC method name, as in the kubelet's logs and the proto. */
  static String methodName(Method method) {
    return switch (method) {
      case GET_DEVICE_PLUGIN_OPTIONS -> "GetDevicePluginOptions";
      case GET_PREFERRED_ALLOCATION -> "GetPreferredAllocation";
      case ALLOCATE -> "Allocate";
      case PRE_START_CONTAINER -> "PreStartContainer";
      case LIST_AND_WATCH -> "ListAndWatch";
    };
  }

  static String modeName(RegistrationMode mode) {
    return mode.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The meters and gauge state of one resource. */
  private final class ResourceMeters {
    private final String resource;
    final AtomicInteger registered = new AtomicInteger();
    final AtomicInteger healthy = new AtomicInteger();
    final AtomicInteger unhealthy = new AtomicInteger();
    final AtomicInteger openStreams = new AtomicInteger();
    volatile long lastRegistered = Long.MIN_VALUE;
    final Counter kubeletLost;
    final DistributionSummary listSent;
    final Timer discoveryOk;
    final Timer discoveryFailed;
    private final Map<Method, Map<String, Timer>> rpcTimers = new EnumMap<>(Method.class);
    private final Map<Method, Counter> requested = new ConcurrentHashMap<>();
    private final Map<String, Counter> streamsEnded = new ConcurrentHashMap<>();
    private final Map<String, Timer> registrations = new ConcurrentHashMap<>();
    private final Map<RegistrationMode, Counter> reRegistrations = new ConcurrentHashMap<>();
    private final Map<String, Counter> errors = new ConcurrentHashMap<>();

    ResourceMeters(String resource) {
      this.resource = resource;
      for (Method method : Method.values()) {
        rpcTimers.put(method, new ConcurrentHashMap<>());
      }
      Gauge.builder(PREFIX + "registered", registered, AtomicInteger::get)
          .description("1 while the kubelet has accepted the resource, else 0")
          .tag("resource", resource)
          .strongReference(true)
          .register(registry);
      Gauge.builder(PREFIX + "devices", healthy, AtomicInteger::get)
          .description("Devices in the list the kubelet sees, by health")
          .tag("resource", resource)
          .tag("health", "healthy")
          .strongReference(true)
          .register(registry);
      Gauge.builder(PREFIX + "devices", unhealthy, AtomicInteger::get)
          .description("Devices in the list the kubelet sees, by health")
          .tag("resource", resource)
          .tag("health", "unhealthy")
          .strongReference(true)
          .register(registry);
      Gauge.builder(PREFIX + "streams.open", openStreams, AtomicInteger::get)
          .description("Open ListAndWatch streams")
          .tag("resource", resource)
          .strongReference(true)
          .register(registry);
      TimeGauge.builder(
              PREFIX + "registration.age", this, TimeUnit.NANOSECONDS, ResourceMeters::ageNanos)
          .description("Time since the last successful registration; NaN before the first")
          .tag("resource", resource)
          .strongReference(true)
          .register(registry);
      kubeletLost =
          Counter.builder(PREFIX + "kubelet.lost")
              .description("Times the kubelet went away for the resource")
              .tag("resource", resource)
              .register(registry);
      listSent =
          DistributionSummary.builder(PREFIX + "device.list.sent")
              .description("Device lists sent on ListAndWatch streams, by serialized size")
              .baseUnit("bytes")
              .tag("resource", resource)
              .register(registry);
      discoveryOk = discovery("success");
      discoveryFailed = discovery("failure");
      // The calls every plugin answers, built here (the resource's first event: its first
      // discovery, before its socket is served) instead of at the first call. Built there, they
      // cost that call 0.4-0.7 ms on the event loop after its answer, in the interpreter; on a
      // small node that delayed the kubelet reading the answer of its first Allocate.
      rpc(Method.GET_DEVICE_PLUGIN_OPTIONS, OK);
      rpc(Method.ALLOCATE, OK);
      requested(Method.ALLOCATE);
    }

    private Timer discovery(String outcome) {
      return Timer.builder(PREFIX + "discovery")
          .description("Runs of the backend's device discovery")
          .tag("resource", resource)
          .tag("outcome", outcome)
          .register(registry);
    }

    double ageNanos() {
      long last = lastRegistered;
      return last == Long.MIN_VALUE ? Double.NaN : clock.monotonicTime() - last;
    }

    Timer rpc(Method method, String code) {
      Map<String, Timer> byCode = rpcTimers.get(method);
      Timer timer = byCode.get(code);
      if (timer != null) {
        return timer;
      }
      return byCode.computeIfAbsent(
          code,
          c ->
              Timer.builder(PREFIX + "rpc")
                  .description("Calls of the kubelet on the plugin, by method and status code")
                  .tag("resource", resource)
                  .tag("method", methodName(method))
                  .tag("code", c)
                  .publishPercentileHistogram(percentileHistograms)
                  .register(registry));
    }

    Counter requested(Method method) {
      Counter counter = requested.get(method);
      if (counter != null) {
        return counter;
      }
      return requested.computeIfAbsent(
          method,
          m ->
              Counter.builder(PREFIX + "devices.requested")
                  .description("Device IDs named by the kubelet's requests")
                  .tag("resource", resource)
                  .tag("method", methodName(m))
                  .register(registry));
    }

    void streamEnded(String code) {
      openStreams.updateAndGet(n -> Math.max(0, n - 1));
      streamsEnded
          .computeIfAbsent(
              code,
              c ->
                  Counter.builder(PREFIX + "streams.ended")
                      .description("ListAndWatch streams that ended, by status code")
                      .tag("resource", resource)
                      .tag("code", c)
                      .register(registry))
          .increment();
    }

    Timer registration(RegistrationMode mode, boolean success) {
      String outcome = success ? "success" : "failure";
      return registrations.computeIfAbsent(
          modeName(mode) + '/' + outcome,
          k ->
              Timer.builder(PREFIX + "registration")
                  .description("Registration attempts with the kubelet, by mode and outcome")
                  .tag("resource", resource)
                  .tag("mode", modeName(mode))
                  .tag("outcome", outcome)
                  .register(registry));
    }

    Counter reRegistrations(RegistrationMode mode) {
      return reRegistrations.computeIfAbsent(
          mode,
          m ->
              Counter.builder(PREFIX + "reregistrations")
                  .description("Registrations after the first one of this run")
                  .tag("resource", resource)
                  .tag("mode", modeName(m))
                  .register(registry));
    }

    Counter error(String type) {
      return errors.computeIfAbsent(
          type,
          t ->
              Counter.builder(PREFIX + "errors")
                  .description("Problems reported to listeners, by exception type")
                  .tag("resource", resource)
                  .tag("type", t)
                  .register(registry));
    }
  }
}
