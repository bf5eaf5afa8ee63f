/**
 * Process-level scenarios, measured from outside the plugin's JVM: the harness starts {@code java}
 * as a child process, runs the fake kubelet itself, and takes {@link System#nanoTime()} right
 * before the process starts and when the fake kubelet records the registration, the first device
 * list and the answered Allocate. Memory is read from {@code /proc/<pid>/status} ({@code VmRSS},
 * {@code VmHWM}, {@code Threads}).
 *
 * <ul>
 *   <li>{@link io.github.deviceplugin4j.benchmarks.process.ColdStartScenario} ({@code coldstart})
 *   <li>{@link io.github.deviceplugin4j.benchmarks.process.MemoryScenario} ({@code memory})
 *   <li>{@link io.github.deviceplugin4j.benchmarks.process.MultiResourceScenario} ({@code
 *       resources}, which starts {@link
 *       io.github.deviceplugin4j.benchmarks.process.MultiResourceMain})
 * </ul>
 *
 * <p>The JVM flag sets compared are in {@link
 * io.github.deviceplugin4j.benchmarks.process.JvmFlags}.
 */
package io.github.deviceplugin4j.benchmarks.process;
