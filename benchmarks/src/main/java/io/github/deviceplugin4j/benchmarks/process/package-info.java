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
 *   <li>{@link io.github.deviceplugin4j.benchmarks.process.GoFlags} ({@code flags}), and the
 *       Go-client variants of {@code allocate} ({@link
 *       io.github.deviceplugin4j.benchmarks.process.GoAllocate}) and {@code restart} ({@link
 *       io.github.deviceplugin4j.benchmarks.process.GoRestart}): the kubelet side is the Go
 *       programs of {@code benchmarks/go} ({@link
 *       io.github.deviceplugin4j.benchmarks.process.GoPrograms}), the plugins are processes ({@link
 *       io.github.deviceplugin4j.benchmarks.process.DeclarativeMain}, {@link
 *       io.github.deviceplugin4j.benchmarks.process.BaselineMain}, the FPGA example jar, the Go
 *       stub plugin)
 * </ul>
 *
 * <p>The JVM flag sets compared are in {@link
 * io.github.deviceplugin4j.benchmarks.process.JvmFlags}.
 */
package io.github.deviceplugin4j.benchmarks.process;
