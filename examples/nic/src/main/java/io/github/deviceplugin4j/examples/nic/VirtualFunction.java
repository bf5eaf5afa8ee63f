package io.github.deviceplugin4j.examples.nic;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One SR-IOV virtual function as read from sysfs.
 *
 * @param address its PCI address, e.g. {@code 0000:3b:02.0}; also the plugin's device ID
 * @param pfName the physical function's interface name
 * @param pfAddress the physical function's PCI address
 * @param index the VF index on its PF (the N of {@code virtfnN})
 * @param vendor vendor ID, hex without {@code 0x}
 * @param device device ID, hex without {@code 0x}
 * @param driver the bound driver ({@code driver} link), if any
 * @param iommuGroup the IOMMU group number ({@code iommu_group} link), if any
 * @param vfioNodePresent whether {@code /dev/vfio/<group>} exists (only meaningful for vfio-pci)
 * @param numaNode the NUMA node, if known
 * @param pfLinkUp whether the PF's {@code operstate} reads {@code up}
 */
public record VirtualFunction(
    String address,
    String pfName,
    String pfAddress,
    int index,
    String vendor,
    String device,
    Optional<String> driver,
    Optional<String> iommuGroup,
    boolean vfioNodePresent,
    OptionalInt numaNode,
    boolean pfLinkUp) {

  /**
   * Checks for nulls.
   *
   * @param address see {@link #address()}
   * @param pfName see {@link #pfName()}
   * @param pfAddress see {@link #pfAddress()}
   * @param index see {@link #index()}
   * @param vendor see {@link #vendor()}
   * @param device see {@link #device()}
   * @param driver see {@link #driver()}
   * @param iommuGroup see {@link #iommuGroup()}
   * @param vfioNodePresent see {@link #vfioNodePresent()}
   * @param numaNode see {@link #numaNode()}
   * @param pfLinkUp see {@link #pfLinkUp()}
   */
  public VirtualFunction {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(pfName, "pfName");
    Objects.requireNonNull(pfAddress, "pfAddress");
    Objects.requireNonNull(vendor, "vendor");
    Objects.requireNonNull(device, "device");
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(iommuGroup, "iommuGroup");
    Objects.requireNonNull(numaNode, "numaNode");
  }

  /**
   * Whether the VF is bound to vfio-pci (user-space drivers such as DPDK).
   *
   * @return true for vfio-pci
   */
  public boolean isVfio() {
    return driver.filter("vfio-pci"::equals).isPresent();
  }
}
