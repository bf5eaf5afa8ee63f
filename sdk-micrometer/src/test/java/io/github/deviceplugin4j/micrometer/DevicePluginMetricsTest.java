package io.github.deviceplugin4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.BackendException;
import io.github.deviceplugin4j.core.PluginObserver.DeviceListSent;
import io.github.deviceplugin4j.core.PluginObserver.Discovery;
import io.github.deviceplugin4j.core.PluginObserver.Method;
import io.github.deviceplugin4j.core.PluginObserver.Registration;
import io.github.deviceplugin4j.core.PluginObserver.Rpc;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DevicePluginMetricsTest {

  private static final String FPGA = "example.com/fpga";
  private static final String NIC = "example.com/nic";

  private final MockClock clock = new MockClock();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
  private final DevicePluginMetrics metrics = DevicePluginMetrics.of(registry);

  @Test
  void rpcs_areTimedByResourceMethodAndCode() {
    metrics.onRpc(new Rpc(FPGA, Method.ALLOCATE, "OK", 2_000_000, 2));
    metrics.onRpc(new Rpc(FPGA, Method.ALLOCATE, "OK", 4_000_000, 1));
    metrics.onRpc(new Rpc(FPGA, Method.ALLOCATE, "INVALID_ARGUMENT", 1_000_000, 1));
    metrics.onRpc(new Rpc(NIC, Method.GET_PREFERRED_ALLOCATION, "OK", 1_000_000, 4));

    var ok = rpc(FPGA, "Allocate", "OK");
    assertThat(ok.count()).isEqualTo(2);
    assertThat(ok.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(6.0);
    assertThat(rpc(FPGA, "Allocate", "INVALID_ARGUMENT").count()).isEqualTo(1);
    assertThat(rpc(NIC, "GetPreferredAllocation", "OK").count()).isEqualTo(1);
    assertThat(
            registry
                .find("deviceplugin4j.rpc")
                .tag("resource", NIC)
                .tag("method", "PreStartContainer")
                .timer())
        .as("no timer for a call that never happened")
        .isNull();
  }

  @Test
  void callsEveryPluginAnswers_startAtZeroWithTheResourcesFirstEvent() {
    metrics.onDiscovery(new Discovery(NIC, true, "", 4, 1_000_000));

    assertThat(rpc(NIC, "Allocate", "OK").count()).isZero();
    assertThat(rpc(NIC, "GetDevicePluginOptions", "OK").count()).isZero();
    assertThat(requested(NIC, "Allocate")).isZero();
    assertThat(
            registry
                .find("deviceplugin4j.rpc")
                .tag("resource", NIC)
                .tag("method", "Allocate")
                .tag("code", "INVALID_ARGUMENT")
                .timer())
        .as("error codes appear with their first call")
        .isNull();
    assertThat(registry.find("deviceplugin4j.rpc").tag("resource", FPGA).timer())
        .as("another resource has no meters before its own first event")
        .isNull();

    metrics.onRpc(new Rpc(NIC, Method.ALLOCATE, "OK", 3_000_000, 2));

    assertThat(rpc(NIC, "Allocate", "OK").count()).isEqualTo(1);
    assertThat(requested(NIC, "Allocate")).isEqualTo(2);
  }

  @Test
  void devicesNamedByRequests_areCountedPerMethod() {
    metrics.onRpc(new Rpc(FPGA, Method.ALLOCATE, "OK", 1, 2));
    metrics.onRpc(new Rpc(FPGA, Method.ALLOCATE, "UNAVAILABLE", 1, 3));
    metrics.onRpc(new Rpc(FPGA, Method.PRE_START_CONTAINER, "OK", 1, 2));
    metrics.onRpc(new Rpc(FPGA, Method.GET_DEVICE_PLUGIN_OPTIONS, "OK", 1, 0));

    assertThat(requested(FPGA, "Allocate")).isEqualTo(5);
    assertThat(requested(FPGA, "PreStartContainer")).isEqualTo(2);
    assertThat(
            registry
                .find("deviceplugin4j.devices.requested")
                .tag("method", "GetDevicePluginOptions")
                .counter())
        .as("no series for a method that names no devices")
        .isNull();
  }

  @Test
  void listAndWatchEnd_countsTheStreamAndClosesIt_withoutTouchingTheRpcTimer() {
    metrics.onStreamOpened(FPGA, 1);
    metrics.onStreamOpened(FPGA, 2);
    assertThat(gauge("deviceplugin4j.streams.open", FPGA)).isEqualTo(2);

    metrics.onRpc(new Rpc(FPGA, Method.LIST_AND_WATCH, "CANCELLED", 60_000_000_000L, 0));

    assertThat(gauge("deviceplugin4j.streams.open", FPGA)).isEqualTo(1);
    assertThat(
            registry
                .get("deviceplugin4j.streams.ended")
                .tag("resource", FPGA)
                .tag("code", "CANCELLED")
                .counter()
                .count())
        .isEqualTo(1);
    assertThat(registry.find("deviceplugin4j.rpc").tag("method", "ListAndWatch").timer()).isNull();
    assertThat(registry.find("deviceplugin4j.rpc").timers())
        .allSatisfy(t -> assertThat(t.count()).as(t.getId().toString()).isZero());
  }

  @Test
  void deviceListSends_recordBytesAndOpenStreams() {
    metrics.onDeviceListSent(new DeviceListSent(FPGA, 3, 1, 120, 1));
    metrics.onDeviceListSent(new DeviceListSent(FPGA, 2, 2, 130, 2));

    var sent = registry.get("deviceplugin4j.device.list.sent").tag("resource", FPGA).summary();
    assertThat(sent.count()).isEqualTo(2);
    assertThat(sent.totalAmount()).isEqualTo(250);
    assertThat(gauge("deviceplugin4j.streams.open", FPGA)).isEqualTo(2);
  }

  @Test
  void devicesByHealth_followTheLatestList() {
    metrics.onDevicesChanged(FPGA, 4, 4);
    metrics.onDevicesChanged(FPGA, 4, 3);

    assertThat(devices(FPGA, "healthy")).isEqualTo(3);
    assertThat(devices(FPGA, "unhealthy")).isEqualTo(1);
  }

  @Test
  void registrationAttempts_areTimedByModeAndOutcome() {
    metrics.onRegistration(
        new Registration(FPGA, RegistrationMode.LEGACY, "v1beta1", 1, false, false, "refused", 5));
    metrics.onRegistration(
        new Registration(FPGA, RegistrationMode.LEGACY, "v1beta1", 2, false, true, "", 7));

    assertThat(registration(FPGA, "legacy", "failure")).isEqualTo(1);
    assertThat(registration(FPGA, "legacy", "success")).isEqualTo(1);
  }

  @Test
  void registeredState_reRegistrationsAndRegistrationAge_followTheListener() {
    assertThat(registry.find("deviceplugin4j.registered").gauge()).isNull();

    metrics.onRegistered(FPGA, RegistrationMode.PLUGIN_WATCHER, false);
    clock.add(Duration.ofSeconds(30));
    assertThat(gauge("deviceplugin4j.registered", FPGA)).isEqualTo(1);
    assertThat(age(FPGA)).isEqualTo(30.0);
    assertThat(registry.find("deviceplugin4j.reregistrations").counter()).isNull();

    metrics.onKubeletLost(FPGA);
    assertThat(gauge("deviceplugin4j.registered", FPGA)).isZero();
    assertThat(registry.get("deviceplugin4j.kubelet.lost").counter().count()).isEqualTo(1);

    metrics.onRegistered(FPGA, RegistrationMode.PLUGIN_WATCHER, true);
    clock.add(Duration.ofSeconds(2));
    assertThat(gauge("deviceplugin4j.registered", FPGA)).isEqualTo(1);
    assertThat(age(FPGA)).isEqualTo(2.0);
    assertThat(
            registry
                .get("deviceplugin4j.reregistrations")
                .tag("resource", FPGA)
                .tag("mode", "plugin_watcher")
                .counter()
                .count())
        .isEqualTo(1);

    metrics.onStopped();
    assertThat(gauge("deviceplugin4j.registered", FPGA)).isZero();
  }

  @Test
  void registrationAge_isNaNBeforeTheFirstRegistration() {
    metrics.onDevicesChanged(FPGA, 1, 1);

    assertThat(age(FPGA)).isNaN();
  }

  @Test
  void discoveryRuns_areTimedByOutcome() {
    metrics.onDiscovery(new Discovery(FPGA, true, "", 4, 3_000_000));
    metrics.onDiscovery(new Discovery(FPGA, false, "sysfs unreadable", 0, 1_000_000));
    metrics.onDiscovery(new Discovery(FPGA, false, "sysfs unreadable", 0, 1_000_000));

    assertThat(discovery(FPGA, "success")).isEqualTo(1);
    assertThat(discovery(FPGA, "failure")).isEqualTo(2);
  }

  @Test
  void errors_areCountedByType() {
    metrics.onError(FPGA, new BackendException("devices", "disk gone", null));

    assertThat(
            registry
                .get("deviceplugin4j.errors")
                .tag("resource", FPGA)
                .tag("type", "BackendException")
                .counter()
                .count())
        .isEqualTo(1);
  }

  private io.micrometer.core.instrument.Timer rpc(String resource, String method, String code) {
    return registry
        .get("deviceplugin4j.rpc")
        .tag("resource", resource)
        .tag("method", method)
        .tag("code", code)
        .timer();
  }

  private double requested(String resource, String method) {
    return registry
        .get("deviceplugin4j.devices.requested")
        .tag("resource", resource)
        .tag("method", method)
        .counter()
        .count();
  }

  private double gauge(String name, String resource) {
    return registry.get(name).tag("resource", resource).gauge().value();
  }

  private double devices(String resource, String health) {
    return registry
        .get("deviceplugin4j.devices")
        .tag("resource", resource)
        .tag("health", health)
        .gauge()
        .value();
  }

  private double age(String resource) {
    return registry
        .get("deviceplugin4j.registration.age")
        .tag("resource", resource)
        .timeGauge()
        .value(TimeUnit.SECONDS);
  }

  private long registration(String resource, String mode, String outcome) {
    return registry
        .get("deviceplugin4j.registration")
        .tag("resource", resource)
        .tag("mode", mode)
        .tag("outcome", outcome)
        .timer()
        .count();
  }

  private long discovery(String resource, String outcome) {
    return registry
        .get("deviceplugin4j.discovery")
        .tag("resource", resource)
        .tag("outcome", outcome)
        .timer()
        .count();
  }
}
