/**
 * AssertJ assertions for allocations and the fake kubelet's device state. Needs {@code
 * org.assertj:assertj-core} on the test class path (an optional dependency of the testkit).
 *
 * <pre>{@code
 * import static io.github.deviceplugin4j.testkit.assertj.KubeletAssertions.assertThat;
 *
 * assertThat(kubelet).hasRegistered("example.com/fpga").hasAllocatable("example.com/fpga", 4);
 * assertThat(kubelet.allocate("example.com/fpga", 1))
 *     .isWellFormed()
 *     .hasDeviceNode("/dev/fpga0", "rw")
 *     .hasEnv("FPGA_DEVICES", "fpga0");
 * }</pre>
 */
package io.github.deviceplugin4j.testkit.assertj;
