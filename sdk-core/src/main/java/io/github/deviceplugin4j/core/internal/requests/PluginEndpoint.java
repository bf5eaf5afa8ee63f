package io.github.deviceplugin4j.core.internal.requests;

import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.state.DeviceState;

/** What a DevicePlugin service of any API version serves for one resource. */
public interface PluginEndpoint {

  /** The resource name, e.g. {@code vendor.example.com/fpga}. */
  String resourceName();

  /** The device list and its streams. */
  DeviceState devices();

  /** Allocate, preferred allocation and pre-start. */
  RequestHandler requests();

  /** Told about every call, stream and device list sent; {@link Observers#NONE} by default. */
  default Observers observers() {
    return Observers.NONE;
  }
}
