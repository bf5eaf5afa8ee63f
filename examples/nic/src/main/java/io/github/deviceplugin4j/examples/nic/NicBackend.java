package io.github.deviceplugin4j.examples.nic;

import io.github.deviceplugin4j.core.AllocationRequest;
import io.github.deviceplugin4j.core.Allocator;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.examples.common.SysfsBackend;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pool of SR-IOV virtual functions: the VFs of the pool's PFs that pass its vendor, device and
 * driver filters, one device per VF (its PCI address is the device ID).
 *
 * <p>Every VF gives the container the variable {@code PCIDEVICE_<RESOURCE>} (the resource name in
 * upper case with {@code .}, {@code /} and {@code -} as {@code _}), listing the container's VF
 * addresses separated by commas, the convention SR-IOV CNI and DPDK applications read. A VF bound
 * to {@code vfio-pci} also gives {@code /dev/vfio/<iommu group>} and {@code /dev/vfio/vfio}; a VF
 * bound to a network driver gives no device node (the CNI moves its interface into the pod). A VF
 * is healthy while its PF's link is up. On allocation it writes the device-info file of each VF
 * (see {@link DeviceInfoFiles} for when those files are removed). Resource name, poll interval,
 * rescan and the problem log come from {@link SysfsBackend} (module {@code examples/common}).
 *
 * <pre>{@code
 * NicConfig config = NicConfig.parse(args, System.getenv());
 * DevicePluginHost.Builder host = DevicePluginHost.builder();
 * config.pools().forEach(pool -> host.backend(new NicBackend(config, pool)));
 * host.run();
 * }</pre>
 */
public final class NicBackend extends SysfsBackend implements Allocator {
  private static final Logger log = LoggerFactory.getLogger(NicBackend.class);

  private final NicConfig config;
  private final NicPool pool;
  private final String envName;
  private final SriovScanner scanner;
  private final DeviceInfoFiles deviceInfo;
  private final Map<String, VirtualFunction> current = new ConcurrentHashMap<>();
  private final Map<String, Boolean> linkUp = new ConcurrentHashMap<>();

  /**
   * A backend for one pool.
   *
   * @param config the plugin's settings
   * @param pool the pool
   */
  public NicBackend(NicConfig config, NicPool pool) {
    super(
        log,
        Objects.requireNonNull(config, "config").resourceName(Objects.requireNonNull(pool, "pool")),
        config.pollInterval());
    this.config = config;
    this.pool = pool;
    this.envName = envName(resourceName());
    this.scanner = new SriovScanner(config.root());
    this.deviceInfo = new DeviceInfoFiles(config.devInfoDir(), resourceName());
  }

  /**
   * The variable that lists a container's VF addresses.
   *
   * @param resourceName e.g. {@code nic.example.com/sriov_netdevice}
   * @return e.g. {@code PCIDEVICE_NIC_EXAMPLE_COM_SRIOV_NETDEVICE}
   */
  public static String envName(String resourceName) {
    return "PCIDEVICE_" + resourceName.toUpperCase(Locale.ROOT).replaceAll("[./-]", "_");
  }

  @Override
  public List<Device> devices() {
    SriovScanner.Scan scan = scanner.scan(pool.pfNames());
    reportProblems(scan.problems());
    Map<String, VirtualFunction> found = new LinkedHashMap<>();
    List<Device> devices = new ArrayList<>();
    for (VirtualFunction vf : scan.vfs()) {
      if (pool.accepts(vf.vendor(), vf.device(), vf.driver())) {
        found.put(vf.address(), vf);
        devices.add(toDevice(vf));
      }
    }
    for (String pf : pool.pfNames()) {
      List<VirtualFunction> ofPf =
          found.values().stream().filter(v -> v.pfName().equals(pf)).toList();
      if (ofPf.isEmpty()) {
        linkUp.remove(pf);
        continue;
      }
      boolean up = ofPf.get(0).pfLinkUp();
      Boolean was = linkUp.put(pf, up);
      if (Boolean.TRUE.equals(was) && !up) {
        log.warn(
            "{}: link of PF {} is down; its {} VFs are unhealthy", resourceName(), pf, ofPf.size());
      } else if (Boolean.FALSE.equals(was) && up) {
        log.info("{}: link of PF {} is up again; its VFs are healthy", resourceName(), pf);
      }
    }
    current.keySet().retainAll(found.keySet());
    current.putAll(found);
    try {
      for (String gone : deviceInfo.removeAllExcept(found.keySet())) {
        log.info("{}: VF {} left the pool; removed its device-info file", resourceName(), gone);
      }
    } catch (IOException e) {
      // Discovery must not fail because of the CNI side; the next scan tries again.
      log.warn(
          "{}: cannot clean device-info files in {}: {}",
          resourceName(),
          config.devInfoDir(),
          e.toString());
    }
    return devices;
  }

  private Device toDevice(VirtualFunction vf) {
    boolean healthy = vf.pfLinkUp() && (!vf.isVfio() || vf.vfioNodePresent());
    Device.Builder b =
        Device.builder(vf.address()).health(Health.of(healthy)).env(envName, vf.address());
    if (vf.isVfio()) {
      b.deviceNode(DeviceNode.rw("/dev/vfio/vfio"));
      b.deviceNode(DeviceNode.rw("/dev/vfio/" + vf.iommuGroup().orElseThrow()));
    }
    vf.numaNode().ifPresent(b::numaNode);
    return b.build();
  }

  /**
   * Writes the device-info file of each allocated VF, then answers the default allocation (variable
   * and, for vfio-pci, device nodes).
   */
  @Override
  public ContainerAllocation allocate(AllocationRequest request) throws IOException {
    for (String id : request.deviceIds()) {
      VirtualFunction vf = current.get(id);
      if (vf == null) {
        throw new IllegalStateException(
            "VF "
                + id
                + " is no longer in "
                + resourceName()
                + "; the kubelet will retry elsewhere");
      }
      deviceInfo.write(vf);
    }
    log.info("{}: allocated {}", resourceName(), request.deviceIds());
    return request.defaultAllocation();
  }

  /**
   * The device-info file of a VF (it exists once the VF has been allocated).
   *
   * @param deviceId the VF's PCI address
   * @return the file's path
   */
  public Path deviceInfoFile(String deviceId) {
    return deviceInfo.fileFor(deviceId);
  }

  /** Removes every device-info file this process wrote. */
  @Override
  public void stop() {
    super.stop();
    try {
      deviceInfo.removeWritten();
    } catch (IOException e) {
      log.warn("{}: cannot remove device-info files: {}", resourceName(), e.toString());
    }
  }
}
