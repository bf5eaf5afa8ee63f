package io.github.deviceplugin4j.reliability;

import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.PreStartHook;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A backend whose device list the test sets, pushed through the sink; {@link #failDiscovery} makes
 * {@code devices()} throw. Subclass {@link Capable} adds the optional capabilities.
 */
class ScriptedBackend implements DeviceBackend {

  private final String resource;
  private volatile List<Device> devices;
  private volatile DeviceSink sink;
  private final AtomicReference<Exception> discoveryFailure = new AtomicReference<>();
  volatile boolean returnNull;

  ScriptedBackend(String resource, List<Device> devices) {
    this.resource = resource;
    this.devices = List.copyOf(devices);
  }

  static ScriptedBackend healthy(String resource, int count) {
    return new ScriptedBackend(resource, healthyDevices(count));
  }

  static List<Device> healthyDevices(int count) {
    List<Device> list = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      list.add(Device.healthy("d" + i));
    }
    return list;
  }

  @Override
  public String resourceName() {
    return resource;
  }

  @Override
  public List<Device> devices() throws Exception {
    Exception failure = discoveryFailure.get();
    if (failure != null) {
      throw failure;
    }
    return returnNull ? null : devices;
  }

  @Override
  public void start(DeviceSink sink) {
    this.sink = sink;
  }

  /** Replaces the list and publishes it. */
  void publish(List<Device> list) {
    devices = List.copyOf(list);
    sink.publish(list);
  }

  /** Sets the list {@code devices()} returns, without publishing it. */
  void replace(List<Device> list) {
    devices = List.copyOf(list);
  }

  /** Publishes a list without making it the one {@code devices()} returns. */
  void publishOnly(List<Device> list) {
    sink.publish(list);
  }

  List<Device> current() {
    return devices;
  }

  /** From now on {@code devices()} throws this (null: works again); asks for a rescan. */
  void failDiscovery(Exception e) {
    discoveryFailure.set(e);
  }

  void rescan() {
    sink.rescan();
  }

  /** A backend with every optional capability, each scripted by the test. */
  static class Capable extends ScriptedBackend
      implements Allocator, PreferredAllocator, PreStartHook {

    /** Computes an allocation; may throw. */
    interface AllocateBehaviour {
      ContainerAllocation allocate(AllocationRequest request) throws Exception;
    }

    /** Chooses preferred devices; may throw. */
    interface PreferredBehaviour {
      List<String> choose(PreferredAllocationRequest request) throws Exception;
    }

    /** Runs before a container starts; may throw. */
    interface PreStartBehaviour {
      void run(List<Device> devices) throws Exception;
    }

    volatile AllocateBehaviour onAllocate = AllocationRequest::defaultAllocation;
    volatile PreferredBehaviour onPreferred =
        r -> {
          List<String> out = new ArrayList<>(r.mustIncludeIds());
          for (String id : r.availableIds()) {
            if (out.size() >= r.size()) {
              break;
            }
            if (!out.contains(id)) {
              out.add(id);
            }
          }
          return out;
        };
    volatile PreStartBehaviour onPreStart = devices -> {};
    final AtomicInteger preStarts = new AtomicInteger();

    Capable(String resource, List<Device> devices) {
      super(resource, devices);
    }

    @Override
    public ContainerAllocation allocate(AllocationRequest request) throws Exception {
      return onAllocate.allocate(request);
    }

    @Override
    public List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception {
      return onPreferred.choose(request);
    }

    @Override
    public void preStart(List<Device> devices) throws Exception {
      preStarts.incrementAndGet();
      onPreStart.run(devices);
    }
  }
}
