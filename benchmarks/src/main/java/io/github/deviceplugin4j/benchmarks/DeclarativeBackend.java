package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import java.util.ArrayList;
import java.util.List;

/**
 * The SDK with no {@code Allocator}: each device declares its device node and {@code
 * BENCH_DEVICES=<id>}, and the core answers Allocate from those declarations without calling the
 * backend. Answers a one-device Allocate exactly like {@link BenchBackend} and {@link
 * BaselinePlugin}.
 */
public final class DeclarativeBackend implements DeviceBackend {

  private final String resource;
  private final List<Device> devices;

  /**
   * A backend with healthy devices {@code dev-0 ...}.
   *
   * @param resource resource name
   * @param n how many devices
   */
  public DeclarativeBackend(String resource, int n) {
    this.resource = resource;
    List<Device> list = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      list.add(BenchBackend.deviceBuilder(i).env(BaselinePlugin.ENV, "dev-" + i).build());
    }
    this.devices = List.copyOf(list);
  }

  @Override
  public String resourceName() {
    return resource;
  }

  @Override
  public List<Device> devices() {
    return devices;
  }
}
