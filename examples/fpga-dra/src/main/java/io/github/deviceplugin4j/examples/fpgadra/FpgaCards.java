package io.github.deviceplugin4j.examples.fpgadra;

import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DeviceSink;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.DevicePartitions;
import io.github.deviceplugin4j.examples.fpga.DflPort;
import io.github.deviceplugin4j.examples.fpga.FpgaBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The FPGA ports of {@link FpgaBackend}, plus each card as a device of its own, published as
 * partitions of one card (partitionable devices, KEP-4815): every card has a counter set {@code
 * ports} holding its number of ports; the whole card consumes all of them, each port one. So the
 * scheduler gives a claim either the whole card (all its ports' device nodes, e.g. to reprogram the
 * static region) or single ports, never both at once.
 *
 * <p>A card is named {@code card-<PCI address>} (as a DRA name: {@link
 * BackendDevices#deviceName(String)}); it is unhealthy when one of its ports is, with that port's
 * reason. A port's unhealthy reason comes from the port itself ({@link DflPort#unhealthyReason()}),
 * so it becomes the value of the device's taint. Ports without a PCI address belong to no card.
 */
public final class FpgaCards implements DeviceBackend, DevicePartitions {

  /** The counter of a card's set that each port takes one of. */
  public static final String PORTS_COUNTER = "ports";

  /** The prefix of a card's device ID. */
  public static final String CARD_PREFIX = "card-";

  private final FpgaBackend ports;

  /**
   * Wraps the backend of every port.
   *
   * @param ports the ports, from {@link FpgaBackend#everyPort}
   */
  public FpgaCards(FpgaBackend ports) {
    this.ports = Objects.requireNonNull(ports, "ports");
  }

  /**
   * The backend of the ports, for their attributes.
   *
   * @return the wrapped backend
   */
  public FpgaBackend ports() {
    return ports;
  }

  /**
   * The PCI address of a card device.
   *
   * @param device a device of this backend
   * @return the card's PCI address when the device is a card, else empty
   */
  public static Optional<String> cardAddress(Device device) {
    return device.id().startsWith(CARD_PREFIX)
        ? Optional.of(device.id().substring(CARD_PREFIX.length()))
        : Optional.empty();
  }

  @Override
  public String resourceName() {
    return ports.resourceName();
  }

  @Override
  public Duration pollInterval() {
    return ports.pollInterval();
  }

  @Override
  public void start(DeviceSink sink) throws Exception {
    ports.start(
        new DeviceSink() {
          @Override
          public void publish(List<Device> snapshot) {
            sink.publish(withCards(snapshot));
          }

          @Override
          public void rescan() {
            sink.rescan();
          }
        });
  }

  @Override
  public void stop() {
    ports.stop();
  }

  @Override
  public List<Device> devices() {
    return withCards(ports.devices());
  }

  private Map<String, List<Device>> byCard(List<Device> portDevices) {
    Map<String, List<Device>> cards = new TreeMap<>();
    for (Device d : portDevices) {
      ports
          .port(d.id())
          .flatMap(DflPort::pciAddress)
          .ifPresent(pci -> cards.computeIfAbsent(pci, k -> new ArrayList<>()).add(d));
    }
    return cards;
  }

  private List<Device> withCards(List<Device> portDevices) {
    List<Device> out = new ArrayList<>();
    for (Device d : portDevices) {
      Optional<String> reason = ports.port(d.id()).flatMap(DflPort::unhealthyReason);
      out.add(d.isHealthy() ? d : d.withHealth(Health.UNHEALTHY, reason.orElse("")));
    }
    for (Map.Entry<String, List<Device>> card : byCard(out).entrySet()) {
      Device.Builder b = Device.builder(CARD_PREFIX + card.getKey());
      List<String> names = new ArrayList<>();
      String reason = null;
      for (Device port : card.getValue()) {
        ContainerAllocation a = port.allocation();
        for (DeviceNode n : a.deviceNodes()) {
          b.deviceNode(n);
        }
        names.add(port.id());
        port.numaNodes().forEach(b::numaNode);
        if (!port.isHealthy() && reason == null) {
          reason = port.id() + ": " + port.unhealthyReason();
        }
      }
      b.env("DFL_PORTS", String.join(",", names));
      if (reason != null) {
        b.health(Health.UNHEALTHY, reason);
      }
      out.add(b.build());
    }
    return out;
  }

  @Override
  public Partitions partitions(List<Device> devices) {
    List<Device> portDevices = devices.stream().filter(d -> cardAddress(d).isEmpty()).toList();
    List<CounterSet> sets = new ArrayList<>();
    Map<String, List<Consumption>> consumption = new LinkedHashMap<>();
    for (Map.Entry<String, List<Device>> card : byCard(portDevices).entrySet()) {
      String set = BackendDevices.deviceName(CARD_PREFIX + card.getKey());
      int count = card.getValue().size();
      sets.add(new CounterSet(set, Map.of(PORTS_COUNTER, String.valueOf(count))));
      consumption.put(
          CARD_PREFIX + card.getKey(),
          List.of(new Consumption(set, Map.of(PORTS_COUNTER, String.valueOf(count)))));
      for (Device port : card.getValue()) {
        consumption.put(port.id(), List.of(new Consumption(set, Map.of(PORTS_COUNTER, "1"))));
      }
    }
    return new Partitions(sets, consumption);
  }
}
