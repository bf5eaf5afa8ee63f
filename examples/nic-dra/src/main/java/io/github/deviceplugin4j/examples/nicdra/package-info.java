/**
 * The SR-IOV NIC example served as a DRA driver that reports each prepared VF's network interface
 * and MAC address in the claim's {@code status.devices} (KEP-4817), for network plugins to read.
 */
package io.github.deviceplugin4j.examples.nicdra;
