/**
 * Reliability and security suites of deviceplugin4j (not published): the tests in this module's
 * {@code src/test} drive real {@code DevicePluginHost}s, the testkit's fake kubelet and the example
 * plugins' runnable jars over real Unix sockets, inject faults and print one figure line per fault
 * ({@code RELIABILITY ...}). The classes here are the measuring tools they share: {@link
 * io.github.deviceplugin4j.reliability.ProcessProbe} (file descriptors, threads, heap, TCP
 * listeners) and {@link io.github.deviceplugin4j.reliability.Figures} (percentiles, figure lines).
 *
 * <p>Run the fast subset with {@code ./mvnw -B verify -pl reliability}, the soak with {@code
 * -Psoak}; see {@code docs/reliability.md}.
 */
package io.github.deviceplugin4j.reliability;
