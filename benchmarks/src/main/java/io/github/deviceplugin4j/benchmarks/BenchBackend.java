package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.PreStartHook;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The SDK side of the benchmarks: a backend with {@code n} devices ({@code dev-0} ...) that answers
 * what {@link BaselinePlugin} answers, as a vendor would write it: an {@link Allocator} building
 * the container's devices and environment, a first-fit {@link PreferredAllocator}, and a no-op
 * {@link PreStartHook}. Its device list changes only when a scenario publishes one.
 */
public class BenchBackend implements DeviceBackend, Allocator, PreferredAllocator, PreStartHook {

  private final String resource;
  private final CompletableFuture<DeviceSink> sink = new CompletableFuture<>();
  private volatile List<Device> devices;

  /**
   * A backend with healthy devices.
   *
   * @param resource the resource name
   * @param n how many devices
   */
  public BenchBackend(String resource, int n) {
    this.resource = resource;
    this.devices = devices(n, Health.HEALTHY);
  }

  /**
   * Devices {@code dev-0 ... dev-(n-1)}, each with its device node, spread over two NUMA nodes.
   *
   * @param n how many
   * @param health their health
   * @return the devices
   */
  public static List<Device> devices(int n, Health health) {
    List<Device> list = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      list.add(device(i, health));
    }
    return list;
  }

  /**
   * Device {@code dev-i}.
   *
   * @param i index
   * @param health its health
   * @return the device
   */
  public static Device device(int i, Health health) {
    return deviceBuilder(i).health(health).build();
  }

  /**
   * Device {@code dev-i} so far: its NUMA node ({@code i % 2}) and its device node {@code
   * /dev/dev-i}.
   *
   * @param i index
   * @return the builder
   */
  public static Device.Builder deviceBuilder(int i) {
    return Device.builder("dev-" + i).numaNode(i % 2).deviceNode(DeviceNode.rw("/dev/dev-" + i));
  }

  @Override
  public String resourceName() {
    return resource;
  }

  @Override
  public List<Device> devices() {
    return devices;
  }

  @Override
  public void start(DeviceSink s) {
    sink.complete(s);
  }

  /**
   * Publishes a new device list, as a backend does when it notices a change.
   *
   * @param list the devices
   * @throws Exception when the host did not start this backend within 10 s
   */
  public void publish(List<Device> list) throws Exception {
    devices = list;
    sink.get(10, TimeUnit.SECONDS).publish(list);
  }

  @Override
  public ContainerAllocation allocate(AllocationRequest request) {
    ContainerAllocation.Builder b = ContainerAllocation.builder();
    List<String> ids = new ArrayList<>(request.devices().size());
    for (Device d : request.devices()) {
      ids.add(d.id());
      b.deviceNode(DeviceNode.rw("/dev/" + d.id()));
    }
    return b.env(BaselinePlugin.ENV, String.join(",", ids)).build();
  }

  @Override
  public List<String> preferredAllocation(PreferredAllocationRequest request) {
    Set<String> chosen = new LinkedHashSet<>();
    request.mustInclude().forEach(d -> chosen.add(d.id()));
    for (Device d : request.available()) {
      if (chosen.size() >= request.size()) {
        break;
      }
      chosen.add(d.id());
    }
    return List.copyOf(chosen);
  }

  @Override
  public void preStart(List<Device> devices) {
    // nothing to prepare: the benchmark measures the SDK's own cost of the call
  }
}
