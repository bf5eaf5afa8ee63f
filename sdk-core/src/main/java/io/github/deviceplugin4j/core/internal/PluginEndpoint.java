package io.github.deviceplugin4j.core.internal;

/** What a DevicePlugin service of any API version serves for one resource. */
public interface PluginEndpoint {

  /**
   * The resource name.
   *
   * @return e.g. {@code vendor.example.com/fpga}
   */
  String resourceName();

  /**
   * The device list and its streams.
   *
   * @return the device state
   */
  DeviceState devices();

  /**
   * Allocate, preferred allocation and pre-start.
   *
   * @return the request handler
   */
  RequestHandler requests();

  /**
   * Who is told about every call, stream and device list sent.
   *
   * @return the observers; {@link Observers#NONE} by default
   */
  default Observers observers() {
    return Observers.NONE;
  }
}
