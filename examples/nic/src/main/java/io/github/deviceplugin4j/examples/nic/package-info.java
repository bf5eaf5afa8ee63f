/**
 * An SR-IOV network device plugin: the virtual functions of configured physical functions, grouped
 * into pools (one resource each) by vendor, device and driver, with the {@code PCIDEVICE_...}
 * variable, vfio device nodes, health from the PF's link, and the device-info files SR-IOV CNI
 * reads. Start at {@link io.github.deviceplugin4j.examples.nic.NicBackend}; the entry point is
 * {@link io.github.deviceplugin4j.examples.nic.NicPlugin}.
 */
package io.github.deviceplugin4j.examples.nic;
