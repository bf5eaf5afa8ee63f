package io.github.deviceplugin4j.examples.nic;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One resource of VFs: the VFs of the listed physical functions that match every non-empty filter.
 *
 * <p>In the config file:
 *
 * <pre>
 * pool.sriov_netdevice.pf-names=ens1f0,ens1f1
 * pool.sriov_netdevice.vendors=8086
 * pool.sriov_netdevice.devices=1889
 * pool.sriov_netdevice.drivers=iavf
 * </pre>
 *
 * @param name the resource name's part after the domain, e.g. {@code sriov_netdevice}
 * @param pfNames the PFs' interface names
 * @param vendors accepted VF vendor IDs, hex without {@code 0x} (empty: any)
 * @param devices accepted VF device IDs, hex without {@code 0x} (empty: any)
 * @param drivers accepted VF drivers, e.g. {@code vfio-pci} (empty: any)
 */
public record NicPool(
    String name,
    List<String> pfNames,
    List<String> vendors,
    List<String> devices,
    List<String> drivers) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

  /**
   * Checks the name and normalizes IDs (lower case, no {@code 0x}).
   *
   * @param name see {@link #name()}
   * @param pfNames see {@link #pfNames()}
   * @param vendors see {@link #vendors()}
   * @param devices see {@link #devices()}
   * @param drivers see {@link #drivers()}
   */
  public NicPool {
    Objects.requireNonNull(name, "name");
    if (!NAME.matcher(name).matches() || name.length() > 63) {
      throw new IllegalArgumentException(
          "pool name '"
              + name
              + "' cannot be a resource name part: use up to 63 letters, digits, '-', '_' or '.',"
              + " starting and ending with a letter or digit");
    }
    pfNames = List.copyOf(pfNames);
    if (pfNames.isEmpty()) {
      throw new IllegalArgumentException(
          "pool " + name + " lists no PF (pool." + name + ".pf-names)");
    }
    vendors = vendors.stream().map(NicPool::hexId).toList();
    devices = devices.stream().map(NicPool::hexId).toList();
    drivers = List.copyOf(drivers);
  }

  /**
   * Whether a VF with these properties belongs to the pool (its PF is checked by the caller).
   *
   * @param vendor the VF's vendor ID as read from sysfs
   * @param device its device ID
   * @param driver its driver, if bound
   * @return true when every filter accepts it
   */
  public boolean accepts(String vendor, String device, Optional<String> driver) {
    return (vendors.isEmpty() || vendors.contains(hexId(vendor)))
        && (devices.isEmpty() || devices.contains(hexId(device)))
        && (drivers.isEmpty() || driver.map(drivers::contains).orElse(false));
  }

  static String hexId(String id) {
    String v = id.trim().toLowerCase(Locale.ROOT);
    return v.startsWith("0x") ? v.substring(2) : v;
  }
}
