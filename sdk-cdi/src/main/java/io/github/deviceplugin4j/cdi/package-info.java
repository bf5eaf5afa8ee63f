/**
 * Container Device Interface (CDI) spec files for a backend's devices.
 *
 * <p>A backend that hands devices to containers through CDI writes one spec file per kind with
 * {@link io.github.deviceplugin4j.cdi.CdiSpecDirectory}, and gives each {@link
 * io.github.deviceplugin4j.core.Device} the fully qualified name from {@link
 * io.github.deviceplugin4j.cdi.CdiSpec#qualifiedName(String)}; the container runtime applies the
 * edits.
 *
 * <pre>{@code
 * CdiSpec spec = CdiSpec.builder("vendor.example.com/fpga")
 *     .device("port0", ContainerAllocation.builder()
 *         .deviceNode(DeviceNode.rw("/dev/dfl-port.0")).build())
 *     .build();
 * CdiSpecDirectory.defaultDirectory().write(spec);   // /var/run/cdi/vendor.example.com-fpga.json
 * Device device = Device.builder("port0").cdiDevice(spec.qualifiedName("port0")).build();
 * }</pre>
 */
package io.github.deviceplugin4j.cdi;
