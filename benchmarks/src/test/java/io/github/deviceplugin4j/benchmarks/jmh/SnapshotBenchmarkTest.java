package io.github.deviceplugin4j.benchmarks.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.core.internal.requests.ApiVersions;
import io.github.deviceplugin4j.core.internal.state.DeviceState;
import io.github.deviceplugin4j.core.internal.state.Snapshot;
import io.github.deviceplugin4j.core.internal.state.Validation;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.infra.Blackhole;

class SnapshotBenchmarkTest {

  private static final Blackhole BH =
      new Blackhole(
          "Today's password is swordfish. I understand instantiating Blackholes directly is"
              + " dangerous.");

  @Test
  void everyBenchmarkEncodesTheWholeList_andSizesGrowButStayUnderTheKubeletLimit()
      throws Exception {
    List<Integer> sizes = new ArrayList<>();
    for (int n : List.of(1_000, 10_000, 100_000)) {
      SnapshotBenchmark b = new SnapshotBenchmark();
      b.devices = n;
      b.setUp();

      Validation.DeviceCheck check = b.checkDevices();
      assertThat(check.accepted()).hasSize(n);
      assertThat(check.problems()).isEmpty();

      Snapshot snapshot = b.snapshotOf();
      assertThat(snapshot.devices()).hasSize(n);
      int size = snapshot.maxEncodedSize();
      System.out.printf("%,d devices: ListAndWatchResponse of %,d bytes%n", n, size);
      assertThat(size)
          .as("encoded size of %d devices", n)
          .isLessThan(DeviceState.KUBELET_MAX_MESSAGE_BYTES);
      sizes.add(size);

      ListAndWatchResponse built = (ListAndWatchResponse) b.encodeDevices();
      assertThat(built.getDevicesCount()).isEqualTo(n);
      assertThat(built.getDevices(n - 1).getID()).isEqualTo("dev-" + (n - 1));

      SnapshotBenchmark.FreshMessage fresh = new SnapshotBenchmark.FreshMessage();
      fresh.build(b);
      assertThat(b.sizeFresh(fresh)).isEqualTo(size);

      byte[] bytes = b.toByteArraySized();
      assertThat(bytes).hasSize(size);
      assertThat(ListAndWatchResponse.parseFrom(bytes)).isEqualTo(built);

      // gRPC's send path writes exactly the bytes of a full encode, announced with the same size.
      ByteArrayOutputStream wire = new ByteArrayOutputStream();
      assertThat(b.send((ListAndWatchResponse) snapshot.wire(ApiVersions.supported().get(0)), wire))
          .isEqualTo(size);
      assertThat(wire.toByteArray()).isEqualTo(bytes);
      assertThat(b.grpcSendSized(BH)).isEqualTo(size);
      fresh.build(b);
      assertThat(b.grpcSendFresh(fresh, BH)).isEqualTo(size);
    }
    assertThat(sizes).isSorted().doesNotHaveDuplicates();
    assertThat(sizes.get(2)).isGreaterThan(sizes.get(1) * 9);
  }
}
