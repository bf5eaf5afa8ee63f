package io.github.deviceplugin4j.examples.fpga;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One FPGA port (and the accelerator behind it) as read from sysfs.
 *
 * @param name the port's device name, e.g. {@code dfl-port.0}; also the plugin's device ID
 * @param sysfsDir its sysfs directory
 * @param region the container region holding it, e.g. {@code region0}
 * @param afuId the accelerator function ID ({@code afu_id}), 32 lower-case hex digits
 * @param interfaceId the region's interface ID ({@code compat_id} of the FME's PR region), if known
 * @param devNode the host device node, e.g. {@code /dev/dfl-port.0}
 * @param devNodePresent whether the node exists
 * @param numaNode NUMA node of the card's PCI device, if known
 * @param pciAddress the card's PCI address such as {@code 0000:5e:00.0}, if the region is a PCI
 *     device's
 * @param errors the port's error bits from {@code errors/errors}, 0 when there are none or the
 *     kernel has no error reporting; empty when the file holds garbage
 */
public record DflPort(
    String name,
    Path sysfsDir,
    String region,
    String afuId,
    Optional<String> interfaceId,
    String devNode,
    boolean devNodePresent,
    OptionalInt numaNode,
    Optional<String> pciAddress,
    Optional<Long> errors) {

  /** The {@code afu_id} the driver reports when the card's firmware has crashed. */
  public static final String CRASHED_AFU_ID = "ffffffffffffffffffffffffffffffff";

  /**
   * Checks for nulls.
   *
   * @param name see {@link #name()}
   * @param sysfsDir see {@link #sysfsDir()}
   * @param region see {@link #region()}
   * @param afuId see {@link #afuId()}
   * @param interfaceId see {@link #interfaceId()}
   * @param devNode see {@link #devNode()}
   * @param devNodePresent see {@link #devNodePresent()}
   * @param numaNode see {@link #numaNode()}
   * @param pciAddress see {@link #pciAddress()}
   * @param errors see {@link #errors()}
   */
  public DflPort {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(sysfsDir, "sysfsDir");
    Objects.requireNonNull(region, "region");
    Objects.requireNonNull(afuId, "afuId");
    Objects.requireNonNull(interfaceId, "interfaceId");
    Objects.requireNonNull(devNode, "devNode");
    Objects.requireNonNull(numaNode, "numaNode");
    Objects.requireNonNull(pciAddress, "pciAddress");
    Objects.requireNonNull(errors, "errors");
  }

  /**
   * Whether a container can use the port: firmware alive, no error bits, device node present.
   *
   * @return true when healthy
   */
  public boolean healthy() {
    return devNodePresent && !CRASHED_AFU_ID.equals(afuId) && errors.orElse(-1L) == 0L;
  }

  /**
   * Why the port is unhealthy, for logs and pre-start errors.
   *
   * @return a sentence, or empty when healthy
   */
  public Optional<String> unhealthyReason() {
    if (!devNodePresent) {
      return Optional.of(name + ": device node " + devNode + " is missing");
    }
    if (CRASHED_AFU_ID.equals(afuId)) {
      return Optional.of(name + ": afu_id reads all f's, the card's firmware has crashed");
    }
    if (errors.isEmpty()) {
      return Optional.of(name + ": errors/errors is unreadable");
    }
    if (errors.get() != 0L) {
      return Optional.of(
          name
              + ": errors/errors reports 0x"
              + Long.toHexString(errors.get())
              + "; clear it by writing that value back to "
              + sysfsDir.resolve("errors/errors")
              + ", or reset the port");
    }
    return Optional.empty();
  }
}
