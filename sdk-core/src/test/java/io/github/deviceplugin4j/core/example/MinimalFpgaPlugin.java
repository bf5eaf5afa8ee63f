package io.github.deviceplugin4j.core.example; // tag::plugin[]

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DevicePluginHost;
import java.util.List;

/** A complete device plugin: two FPGA ports, each with its device node. */
public class MinimalFpgaPlugin implements DeviceBackend {

  @Override
  public String resourceName() {
    return "vendor.example.com/fpga";
  }

  @Override
  public List<Device> devices() {
    return List.of(
        Device.builder("port0").numaNode(0).deviceNode(DeviceNode.rw("/dev/dfl-port.0")).build(),
        Device.builder("port1").numaNode(1).deviceNode(DeviceNode.rw("/dev/dfl-port.1")).build());
  }

  public static void main(String[] args) {
    DevicePluginHost.builder().backend(new MinimalFpgaPlugin()).run();
  }
}
// end::plugin[]
