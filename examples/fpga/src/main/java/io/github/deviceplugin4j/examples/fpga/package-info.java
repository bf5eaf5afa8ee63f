/**
 * An FPGA device plugin for cards driven by the Linux DFL (Device Feature List) driver: one device
 * per port, one resource per accelerator function or region interface, health from the port's error
 * bits, and a pre-start check. Start at {@link io.github.deviceplugin4j.examples.fpga.FpgaBackend};
 * the entry point is {@link io.github.deviceplugin4j.examples.fpga.FpgaPlugin}.
 */
package io.github.deviceplugin4j.examples.fpga;
