/**
 * The end-to-end benchmark harness ({@link io.github.deviceplugin4j.benchmarks.Bench}) and its
 * scenarios: the SDK against the fake kubelet over real Unix sockets, and against a minimal
 * hand-written grpc-java plugin as the baseline. See docs/performance.md.
 */
package io.github.deviceplugin4j.benchmarks;
