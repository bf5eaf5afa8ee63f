package io.github.deviceplugin4j.examples.infiniband;

import io.github.deviceplugin4j.core.AllocationPolicies;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.PreferredAllocationRequest;
import io.github.deviceplugin4j.core.PreferredAllocator;
import io.github.deviceplugin4j.core.Sharing;
import io.github.deviceplugin4j.examples.common.HealthLog;
import io.github.deviceplugin4j.examples.common.SysfsBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RDMA HCAs as one resource, one device per HCA (device ID = HCA name), in one of two modes:
 * exclusive (a container gets whole HCAs) or shared ({@code slots} replicas per HCA through the
 * core's {@link Sharing}, IDs {@code <hca>::<k>}, as the shared RDMA device plugins do; see {@link
 * #sharing()}).
 *
 * <p>Every device gives the container its HCA's {@code /dev/infiniband/uverbsN} and {@code umadN}
 * nodes plus {@code /dev/infiniband/rdma_cm} (read-write), and the variable {@code RDMA_DEVICES}
 * listing the container's HCA names; its NUMA node is the HCA's PCI function's. An HCA is healthy
 * while one of its ports is {@code ACTIVE} and its device nodes exist. As a {@link
 * PreferredAllocator} it asks the kubelet for devices on as few NUMA nodes as possible ({@link
 * AllocationPolicies#numaAligned()}), so a container's HCAs sit next to its CPUs. Resource name,
 * poll interval, rescan and the problem log come from {@link SysfsBackend} (module {@code
 * examples/common}).
 *
 * <pre>{@code
 * InfinibandBackend backend = new InfinibandBackend(InfinibandConfig.shared(Path.of("/"), 8));
 * DevicePluginHost.builder().backend(backend, backend.sharing()).run();
 * }</pre>
 */
public final class InfinibandBackend extends SysfsBackend implements PreferredAllocator {
  private static final Logger log = LoggerFactory.getLogger(InfinibandBackend.class);

  private final InfinibandConfig config;
  private final HcaScanner scanner;
  private final HealthLog health;
  private final PreferredAllocator policy = AllocationPolicies.numaAligned();

  /**
   * A backend with the given settings.
   *
   * @param config the plugin's settings
   */
  public InfinibandBackend(InfinibandConfig config) {
    super(log, Objects.requireNonNull(config, "config").resourceName(), config.pollInterval());
    this.config = config;
    this.scanner = new HcaScanner(config.root());
    this.health = new HealthLog(log, resourceName());
  }

  @Override
  public List<Device> devices() {
    HcaScanner.Scan scan = scanner.scan(config.hcas());
    reportProblems(scan.problems());
    List<Device> devices = new ArrayList<>();
    for (Hca hca : scan.hcas()) {
      health.update(hca.name(), hca.unhealthyReason());
      devices.add(toDevice(hca.name(), hca));
    }
    return devices;
  }

  /**
   * How the host advertises the HCAs: once each in exclusive mode, {@code slots} replicas each in
   * shared mode. Pass it with the backend: {@code builder.backend(backend, backend.sharing())}.
   *
   * @return the sharing of this resource
   */
  public Sharing sharing() {
    return config.mode() == InfinibandConfig.Mode.SHARED
        ? Sharing.replicas(config.slots())
        : Sharing.none();
  }

  private static Device toDevice(String id, Hca hca) {
    Device.Builder b =
        Device.builder(id).health(Health.of(hca.healthy())).env("RDMA_DEVICES", hca.name());
    hca.deviceNodes().forEach(n -> b.deviceNode(DeviceNode.rw(n)));
    hca.numaNode().ifPresent(b::numaNode);
    return b.build();
  }

  /**
   * Prefers devices on as few NUMA nodes as possible, then the kubelet's order; in shared mode the
   * devices are replicas, each with its HCA's NUMA node.
   */
  @Override
  public List<String> preferredAllocation(PreferredAllocationRequest request) throws Exception {
    return policy.preferredAllocation(request);
  }
}
