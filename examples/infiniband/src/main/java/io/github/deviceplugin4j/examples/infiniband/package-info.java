/**
 * An InfiniBand/RDMA device plugin: HCAs under {@code /sys/class/infiniband} with their verbs and
 * MAD device nodes and {@code rdma_cm}, health from port state, exclusive or shared (slots) mode,
 * and a NUMA-aligned preferred allocation. Start at {@link
 * io.github.deviceplugin4j.examples.infiniband.InfinibandBackend}; the entry point is {@link
 * io.github.deviceplugin4j.examples.infiniband.InfinibandPlugin}.
 */
package io.github.deviceplugin4j.examples.infiniband;
