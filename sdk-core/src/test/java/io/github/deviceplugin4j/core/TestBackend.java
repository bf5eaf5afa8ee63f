package io.github.deviceplugin4j.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/** A backend for tests: a settable device list, pushed through the sink on demand. */
class TestBackend implements DeviceBackend {

  private final String resourceName;
  private final AtomicReference<List<Device>> devices;
  final List<String> lifecycle = new CopyOnWriteArrayList<>();
  volatile DeviceSink sink;
  volatile Duration pollInterval = Duration.ZERO;

  TestBackend(String resourceName, List<Device> devices) {
    this.resourceName = resourceName;
    this.devices = new AtomicReference<>(List.copyOf(devices));
  }

  static TestBackend of(String resourceName, String... ids) {
    return new TestBackend(
        resourceName, java.util.Arrays.stream(ids).map(Device::healthy).toList());
  }

  @Override
  public String resourceName() {
    return resourceName;
  }

  @Override
  public List<Device> devices() {
    return devices.get();
  }

  @Override
  public Duration pollInterval() {
    return pollInterval;
  }

  @Override
  public void start(DeviceSink sink) {
    this.sink = sink;
    lifecycle.add("start");
  }

  @Override
  public void stop() {
    lifecycle.add("stop");
  }

  /** Replaces the list and pushes it. */
  void publish(List<Device> list) {
    devices.set(List.copyOf(list));
    sink.publish(list);
  }

  /** Replaces the list without pushing it (for polling tests). */
  void set(List<Device> list) {
    devices.set(List.copyOf(list));
  }
}
