package io.github.deviceplugin4j.examples.infiniband;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One RDMA host channel adapter as read from sysfs.
 *
 * @param name RDMA device name, e.g. {@code mlx5_0}
 * @param pciAddress its PCI function's address
 * @param numaNode NUMA node of the PCI function, if known
 * @param portStates each port's {@code state} name ({@code ACTIVE}, {@code DOWN}, ...) by port
 *     number; {@code ?} when unreadable
 * @param deviceNodes host device nodes a container needs: {@code uverbsN}, {@code umadN} (one per
 *     port) and {@code rdma_cm}
 * @param missingNodes device nodes sysfs names that do not exist under {@code /dev}
 */
public record Hca(
    String name,
    String pciAddress,
    OptionalInt numaNode,
    Map<Integer, String> portStates,
    List<String> deviceNodes,
    List<String> missingNodes) {

  /**
   * Checks for nulls and copies.
   *
   * @param name see {@link #name()}
   * @param pciAddress see {@link #pciAddress()}
   * @param numaNode see {@link #numaNode()}
   * @param portStates see {@link #portStates()}
   * @param deviceNodes see {@link #deviceNodes()}
   * @param missingNodes see {@link #missingNodes()}
   */
  public Hca {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(pciAddress, "pciAddress");
    Objects.requireNonNull(numaNode, "numaNode");
    portStates = Map.copyOf(portStates);
    deviceNodes = List.copyOf(deviceNodes);
    missingNodes = List.copyOf(missingNodes);
  }

  /**
   * Whether a container can use the HCA: a port is ACTIVE, a verbs node exists, no node is missing.
   *
   * @return true when healthy
   */
  public boolean healthy() {
    return unhealthyReason().isEmpty();
  }

  /**
   * Why the HCA is unhealthy.
   *
   * @return a sentence, or empty when healthy
   */
  public Optional<String> unhealthyReason() {
    if (!portStates.containsValue("ACTIVE")) {
      return Optional.of(name + ": no port is ACTIVE " + new java.util.TreeMap<>(portStates));
    }
    if (deviceNodes.stream().noneMatch(n -> n.startsWith("/dev/infiniband/uverbs"))) {
      return Optional.of(name + ": no uverbs device (is ib_uverbs loaded?)");
    }
    if (!missingNodes.isEmpty()) {
      return Optional.of(name + ": device nodes missing: " + missingNodes);
    }
    return Optional.empty();
  }
}
