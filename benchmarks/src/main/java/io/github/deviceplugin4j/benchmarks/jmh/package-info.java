/**
 * JMH microbenchmarks: heap and time per Allocate through the SDK against a hand-written baseline
 * plugin ({@link io.github.deviceplugin4j.benchmarks.jmh.AllocateBenchmark}), and the cost of
 * validating, encoding and size-checking large device lists ({@link
 * io.github.deviceplugin4j.benchmarks.jmh.SnapshotBenchmark}). Run them from the shaded jar:
 *
 * <pre>
 * java -cp benchmarks/target/deviceplugin4j-benchmarks.jar org.openjdk.jmh.Main -prof gc
 * </pre>
 */
package io.github.deviceplugin4j.benchmarks.jmh;
