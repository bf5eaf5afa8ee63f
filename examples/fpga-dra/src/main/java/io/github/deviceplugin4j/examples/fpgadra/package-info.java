/**
 * The FPGA example's backend ({@link io.github.deviceplugin4j.examples.fpga.FpgaBackend}) served as
 * a DRA (Dynamic Resource Allocation) driver, in its own module so that the device plugin's jar
 * does not carry the DRA SDK and its Kubernetes client. The entry point is {@link
 * io.github.deviceplugin4j.examples.fpgadra.FpgaDraDriver}; settings in {@link
 * io.github.deviceplugin4j.examples.fpgadra.FpgaDraConfig}.
 */
package io.github.deviceplugin4j.examples.fpgadra;
