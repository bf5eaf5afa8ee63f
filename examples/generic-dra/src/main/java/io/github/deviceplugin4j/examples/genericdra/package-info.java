/**
 * The generic plugin's configuration file served as a DRA (Dynamic Resource Allocation) driver
 * ({@code --dra}), in its own module so that the device plugin's jar does not carry the DRA SDK and
 * its Kubernetes client. The entry point is {@link
 * io.github.deviceplugin4j.examples.genericdra.GenericDraDriver}; the devices and their attributes
 * come from {@link io.github.deviceplugin4j.examples.genericdra.GenericDraBackend}.
 */
package io.github.deviceplugin4j.examples.genericdra;
