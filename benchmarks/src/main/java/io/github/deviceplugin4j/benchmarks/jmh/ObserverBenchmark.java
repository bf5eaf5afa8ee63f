package io.github.deviceplugin4j.benchmarks.jmh;

import io.github.deviceplugin4j.core.PluginObserver.Method;
import io.github.deviceplugin4j.core.PluginObserver.Rpc;
import io.github.deviceplugin4j.micrometer.DevicePluginMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What {@link DevicePluginMetrics} adds to one kubelet call: recording an {@code Allocate} event
 * (the RPC timer and the devices counter) into a {@link PrometheusMeterRegistry}, as the core does
 * after answering each call when the metrics are bound.
 *
 * <pre>
 * java -cp benchmarks/target/deviceplugin4j-benchmarks.jar org.openjdk.jmh.Main \
 *     -prof gc ObserverBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 4, time = 1)
public class ObserverBenchmark {

  PrometheusMeterRegistry registry;
  DevicePluginMetrics metrics;
  private long nanos;

  /** A registry with the meters of one resource already created. */
  @Setup(Level.Trial)
  public void setUp() {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    metrics = DevicePluginMetrics.of(registry);
    metrics.onRpc(new Rpc("bench.example.com/x", Method.ALLOCATE, "OK", 1, 1));
  }

  /**
   * One Allocate event, built as the core builds it.
   *
   * @return the event (kept by JMH)
   */
  @Benchmark
  public Rpc allocateEvent() {
    Rpc rpc = new Rpc("bench.example.com/x", Method.ALLOCATE, "OK", 100_000 + (nanos++ & 1023), 1);
    metrics.onRpc(rpc);
    return rpc;
  }
}
