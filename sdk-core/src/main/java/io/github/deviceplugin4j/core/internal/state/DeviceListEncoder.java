package io.github.deviceplugin4j.core.internal.state;

import io.github.deviceplugin4j.core.Device;
import java.util.List;

/**
 * How one kubelet API version writes a device list for ListAndWatch: what a {@link Snapshot}
 * encodes once per version. The API adapters implement it; this package knows no generated type.
 */
public interface DeviceListEncoder {

  /**
   * The fully qualified gRPC name of the DevicePlugin service this encoder's version serves, e.g.
   * {@code "v1beta1.DevicePlugin"}; encoders with the same name encode a list once.
   */
  String serviceName();

  /** This version's ListAndWatch message of validated devices, sent as is to every stream. */
  Object encodeDevices(List<Device> devices);

  /** The encoded size of a message from {@link #encodeDevices(List)}, without gRPC framing. */
  int encodedSize(Object message);
}
