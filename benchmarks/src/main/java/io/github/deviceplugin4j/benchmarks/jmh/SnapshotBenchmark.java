package io.github.deviceplugin4j.benchmarks.jmh;

import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.benchmarks.BenchBackend;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.Health;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.requests.ApiVersions;
import io.github.deviceplugin4j.core.internal.state.Snapshot;
import io.github.deviceplugin4j.core.internal.state.Validation;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What a published device list costs the core, and whether the 4 MiB guard adds an encode to every
 * send. The core ({@code DeviceState.apply}) validates the list ({@link Validation#checkDevices}),
 * builds a {@link Snapshot} (maps, the {@code v1beta1} ListAndWatch message, its size), and refuses
 * it when the size is over the kubelet's 4 MiB limit; every stream is then sent that same message
 * object ({@code Subscriber} sends {@code snapshot.wire(adapter)}).
 *
 * <ul>
 *   <li>{@link #checkDevices}, {@link #snapshotOf}: the core's two steps per publication.
 *   <li>{@link #encodeDevices}: building the wire message alone, without its size.
 *   <li>{@link #sizeFresh}: the guard, {@code getSerializedSize()} on a message never sized before.
 *   <li>{@link #toByteArraySized}: a full encode of a message whose size is already memoized.
 *   <li>{@link #grpcSendSized}: what gRPC's server does to send the Snapshot's message (its
 *       marshaller's stream: {@code available()} for the frame length, then {@code drainTo}), on a
 *       message the guard already sized; {@link #grpcSendFresh}: the same on a never-sized message.
 * </ul>
 *
 * <p>{@code sizeFresh} and {@code grpcSendFresh} get a new message per invocation ({@link
 * Level#Invocation} setup, not timed); with {@code -prof gc} their B/op include building that
 * message (compare with {@code encodeDevices}).
 *
 * <pre>
 * java -cp benchmarks/target/deviceplugin4j-benchmarks.jar org.openjdk.jmh.Main \
 *     -prof gc SnapshotBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 4, time = 1)
public class SnapshotBenchmark {

  /** How many devices the list holds. */
  @Param({"1000", "10000", "100000"})
  public int devices;

  private List<Device> list;
  private List<ApiAdapter> adapters;
  private ApiAdapter adapter;
  private ListAndWatchResponse sized;
  private MethodDescriptor.Marshaller<ListAndWatchResponse> marshaller;

  /** Builds the device list (the end-to-end harness's shape) and one sized message. */
  @Setup(Level.Trial)
  public void setUp() {
    list = BenchBackend.devices(devices, Health.HEALTHY);
    adapters = ApiVersions.supported();
    adapter = adapters.get(0);
    Snapshot snapshot = Snapshot.of(1, list, adapters);
    sized = (ListAndWatchResponse) snapshot.wire(adapter);
    marshaller = ProtoUtils.marshaller(ListAndWatchResponse.getDefaultInstance());
  }

  /**
   * The list the core validates on every publication.
   *
   * @return the check
   */
  @Benchmark
  public Validation.DeviceCheck checkDevices() {
    return Validation.checkDevices(list);
  }

  /**
   * A snapshot for every served API version: maps, wire message, its size.
   *
   * @return the snapshot
   */
  @Benchmark
  public Snapshot snapshotOf() {
    return Snapshot.of(1, list, adapters);
  }

  /**
   * The {@code v1beta1} wire message alone, not sized.
   *
   * @return the message
   */
  @Benchmark
  public Object encodeDevices() {
    return adapter.encodeDevices(list);
  }

  /**
   * The size check on a message never sized before: what the guard costs.
   *
   * @param fresh a new message per invocation
   * @return the size
   */
  @Benchmark
  public int sizeFresh(FreshMessage fresh) {
    return fresh.message.getSerializedSize();
  }

  /**
   * A full encode of a message whose size is memoized: the work of serializing it for the wire.
   *
   * @return the bytes
   */
  @Benchmark
  public byte[] toByteArraySized() {
    return sized.toByteArray();
  }

  /**
   * gRPC's send path for the message a snapshot holds (already sized by the guard).
   *
   * @param bh consumes the bytes
   * @return the frame length gRPC would write
   * @throws IOException never (the sink discards)
   */
  @Benchmark
  public int grpcSendSized(Blackhole bh) throws IOException {
    return send(sized, new BlackholeOutputStream(bh));
  }

  /**
   * gRPC's send path for a message never sized before.
   *
   * @param fresh a new message per invocation
   * @param bh consumes the bytes
   * @return the frame length gRPC would write
   * @throws IOException never (the sink discards)
   */
  @Benchmark
  public int grpcSendFresh(FreshMessage fresh, Blackhole bh) throws IOException {
    return send(fresh.message, new BlackholeOutputStream(bh));
  }

  /**
   * What {@code io.grpc.internal.MessageFramer} does with a protobuf message: the marshaller's
   * stream's {@code available()} gives the frame length, then {@code drainTo} writes the message.
   *
   * @param message the message to send
   * @param sink where the bytes go
   * @return the frame length
   * @throws IOException when the sink fails
   */
  int send(ListAndWatchResponse message, OutputStream sink) throws IOException {
    InputStream stream = marshaller.stream(message);
    int length = ((KnownLength) stream).available();
    int written = ((Drainable) stream).drainTo(sink);
    if (written != length) {
      throw new IllegalStateException("wrote " + written + " bytes, announced " + length);
    }
    return length;
  }

  /** A message built for each invocation, never sized. */
  @State(Scope.Thread)
  public static class FreshMessage {
    ListAndWatchResponse message;

    /**
     * Builds a new message from the benchmark's list, as a new snapshot does.
     *
     * @param benchmark the list
     */
    @Setup(Level.Invocation)
    public void build(SnapshotBenchmark benchmark) {
      message = (ListAndWatchResponse) benchmark.adapter.encodeDevices(benchmark.list);
    }
  }

  /** An output stream that hands every byte to a blackhole. */
  static final class BlackholeOutputStream extends OutputStream {
    private final Blackhole bh;

    BlackholeOutputStream(Blackhole bh) {
      this.bh = bh;
    }

    @Override
    public void write(int b) {
      bh.consume(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      bh.consume(b);
      bh.consume(off + len);
    }
  }
}
