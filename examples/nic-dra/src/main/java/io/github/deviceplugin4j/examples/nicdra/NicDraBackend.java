package io.github.deviceplugin4j.examples.nicdra;

import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.dra.DeviceStatusReporter;
import io.github.deviceplugin4j.examples.nic.NicBackend;
import io.github.deviceplugin4j.examples.nic.NicConfig;
import io.github.deviceplugin4j.examples.nic.NicPool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The VFs of every pool of a NIC configuration as one DRA backend, from the device plugin example's
 * {@link NicBackend}s: a VF's ID is its PCI address; preparing it writes the VF's device-info file
 * as the device plugin does (the pool's {@code Allocator}); and after prepare the VF's status is
 * reported on the claim ({@link DeviceStatusReporter}): the interface name and MAC address of a VF
 * bound to a network driver, read from {@code /sys/bus/pci/devices/<vf>/net/<if>/address}, or the
 * PCI address alone (as data) for a VF bound to vfio-pci, which has no interface.
 */
public final class NicDraBackend implements DeviceBackend, Allocator, DeviceStatusReporter {

  private final Path root;
  private final String resourceName;
  private final List<NicBackend> pools;
  private volatile Map<String, NicBackend> poolOf = Map.of();

  /**
   * A backend over every pool of the configuration.
   *
   * @param config the NIC example's settings
   * @param driverName the DRA driver's name, for the backend's resource name
   */
  public NicDraBackend(NicConfig config, String driverName) {
    this.root = config.root();
    this.resourceName = driverName + "/vf";
    List<NicBackend> list = new ArrayList<>();
    for (NicPool pool : config.pools()) {
      list.add(new NicBackend(config, pool));
    }
    this.pools = List.copyOf(list);
  }

  @Override
  public String resourceName() {
    return resourceName;
  }

  @Override
  public Duration pollInterval() {
    return pools.isEmpty() ? Duration.ZERO : pools.get(0).pollInterval();
  }

  @Override
  public void start(DeviceSink sink) throws Exception {
    for (NicBackend pool : pools) {
      pool.start(
          new DeviceSink() {
            @Override
            public void publish(List<Device> snapshot) {
              sink.rescan(); // another pool's VFs are part of the list too: read them all
            }

            @Override
            public void rescan() {
              sink.rescan();
            }
          });
    }
  }

  @Override
  public void stop() {
    pools.forEach(NicBackend::stop);
  }

  @Override
  public List<Device> devices() {
    Map<String, NicBackend> owners = new LinkedHashMap<>();
    List<Device> out = new ArrayList<>();
    for (NicBackend pool : pools) {
      for (Device d : pool.devices()) {
        if (owners.putIfAbsent(d.id(), pool) == null) {
          out.add(d);
        }
      }
    }
    poolOf = Map.copyOf(owners);
    return out;
  }

  /** Each pool writes the device-info files of its VFs; the answers are merged. */
  @Override
  public ContainerAllocation allocate(AllocationRequest request) throws IOException {
    Map<NicBackend, List<Device>> byPool = new LinkedHashMap<>();
    for (Device d : request.devices()) {
      NicBackend pool = poolOf.get(d.id());
      if (pool == null) {
        throw new IllegalStateException(
            "VF " + d.id() + " is in no pool any more; the kubelet will retry");
      }
      byPool.computeIfAbsent(pool, p -> new ArrayList<>()).add(d);
    }
    ContainerAllocation merged = ContainerAllocation.empty();
    for (Map.Entry<NicBackend, List<Device>> e : byPool.entrySet()) {
      ContainerAllocation own = ContainerAllocation.empty();
      for (Device d : e.getValue()) {
        own = own.merge(d.allocation());
      }
      merged =
          merged.merge(
              e.getKey()
                  .allocate(new AllocationRequest(e.getKey().resourceName(), e.getValue(), own)));
    }
    return merged;
  }

  /**
   * The device-info file the pool of a VF wrote for it.
   *
   * @param vfAddress the VF's PCI address
   * @return the file, or empty when no pool has the VF
   */
  public Optional<Path> deviceInfoFile(String vfAddress) {
    return Optional.ofNullable(poolOf.get(vfAddress)).map(p -> p.deviceInfoFile(vfAddress));
  }

  @Override
  public DeviceStatus deviceStatus(Device device) {
    Optional<Netdev> netdev = netdev(device.id());
    if (netdev.isEmpty()) {
      return new DeviceStatus(null, null, List.of(), Map.of("pciAddress", device.id()));
    }
    return new DeviceStatus(
        netdev.get().name(),
        netdev.get().mac().orElse(null),
        List.of(),
        Map.of("pciAddress", device.id()));
  }

  /**
   * A VF's network interface, as sysfs lists it.
   *
   * @param name the interface name, e.g. {@code ens1f0v0}
   * @param mac its MAC address, when sysfs has one
   */
  public record Netdev(String name, Optional<String> mac) {}

  /**
   * The network interface of a VF, when it is bound to a network driver.
   *
   * @param vfAddress the VF's PCI address
   * @return the interface, or empty for a VF without one (vfio-pci)
   */
  public Optional<Netdev> netdev(String vfAddress) {
    Path net = root.resolve("sys/bus/pci/devices").resolve(vfAddress).resolve("net");
    if (!Files.isDirectory(net)) {
      return Optional.empty();
    }
    try (Stream<Path> s = Files.list(net)) {
      return s.sorted()
          .findFirst()
          .map(
              dir -> {
                Optional<String> mac;
                try {
                  Path address = dir.resolve("address");
                  mac =
                      Files.isRegularFile(address)
                          ? Optional.of(Files.readString(address).trim()).filter(m -> !m.isEmpty())
                          : Optional.empty();
                } catch (IOException e) {
                  mac = Optional.empty();
                }
                return new Netdev(dir.getFileName().toString(), mac);
              });
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
