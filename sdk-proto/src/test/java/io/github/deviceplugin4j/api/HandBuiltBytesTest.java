package io.github.deviceplugin4j.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.Device;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Decodes byte sequences built by hand from the protobuf wire format (tag = field number << 3 |
 * wire type), so the generated code is checked against the encoding the kubelet writes, not against
 * itself.
 */
class HandBuiltBytesTest {

  private static final int LEN = 2;
  private static final int VARINT = 0;

  @Test
  void decodesRegisterRequest() throws Exception {
    Bytes options = new Bytes().varint(1, 1).varint(2, 1);
    Bytes bytes =
        new Bytes()
            .string(1, "v1beta1")
            .string(2, "fpga.sock")
            .string(3, "example.com/fpga")
            .message(4, options);

    RegisterRequest request = RegisterRequest.parseFrom(bytes.toByteArray());

    assertThat(request.getVersion()).isEqualTo("v1beta1");
    assertThat(request.getEndpoint()).isEqualTo("fpga.sock");
    assertThat(request.getResourceName()).isEqualTo("example.com/fpga");
    assertThat(request.getOptions().getPreStartRequired()).isTrue();
    assertThat(request.getOptions().getGetPreferredAllocationAvailable()).isTrue();
    assertThat(request.getUnknownFields().asMap()).isEmpty();
  }

  @Test
  void decodesListAndWatchResponseWithTopology() throws Exception {
    Bytes numa1 = new Bytes().varint(1, 1);
    Bytes topology = new Bytes().message(1, numa1);
    Bytes dev0 = new Bytes().string(1, "port-0").string(2, "Healthy").message(3, topology);
    Bytes dev1 = new Bytes().string(1, "port-1").string(2, "Unhealthy");
    Bytes bytes = new Bytes().message(1, dev0).message(1, dev1);

    ListAndWatchResponse response = ListAndWatchResponse.parseFrom(bytes.toByteArray());

    assertThat(response.getDevicesList())
        .extracting(Device::getID)
        .containsExactly("port-0", "port-1");
    assertThat(response.getDevices(0).getHealth()).isEqualTo("Healthy");
    assertThat(response.getDevices(0).getTopology().getNodes(0).getID()).isEqualTo(1L);
    assertThat(response.getDevices(1).getHealth()).isEqualTo("Unhealthy");
    assertThat(response.getDevices(1).hasTopology()).isFalse();
  }

  @Test
  void decodesContainerAllocateResponseWithMapEntryAndCdiDevice() throws Exception {
    Bytes env = new Bytes().string(1, "FPGA_PORT").string(2, "0");
    Bytes mount = new Bytes().string(1, "/opt/afu").string(2, "/var/afu").varint(3, 1);
    Bytes spec =
        new Bytes().string(1, "/dev/dfl-port.0").string(2, "/dev/dfl-port.0").string(3, "rw");
    Bytes annotation = new Bytes().string(1, "example.com/port").string(2, "port-0");
    Bytes cdi = new Bytes().string(1, "example.com/fpga=port-0");
    Bytes container =
        new Bytes()
            .message(1, env)
            .message(2, mount)
            .message(3, spec)
            .message(4, annotation)
            .message(5, cdi);
    Bytes bytes = new Bytes().message(1, container);

    AllocateResponse response = AllocateResponse.parseFrom(bytes.toByteArray());

    assertThat(response.getContainerResponsesCount()).isEqualTo(1);
    ContainerAllocateResponse c = response.getContainerResponses(0);
    assertThat(c.getEnvsMap()).containsExactly(java.util.Map.entry("FPGA_PORT", "0"));
    assertThat(c.getMounts(0).getContainerPath()).isEqualTo("/opt/afu");
    assertThat(c.getMounts(0).getHostPath()).isEqualTo("/var/afu");
    assertThat(c.getMounts(0).getReadOnly()).isTrue();
    assertThat(c.getDevices(0).getHostPath()).isEqualTo("/dev/dfl-port.0");
    assertThat(c.getDevices(0).getPermissions()).isEqualTo("rw");
    assertThat(c.getAnnotationsMap()).containsEntry("example.com/port", "port-0");
    assertThat(c.getCdiDevices(0).getName()).isEqualTo("example.com/fpga=port-0");
    assertThat(c.getUnknownFields().asMap()).isEmpty();
  }

  @Test
  void encodesRegisterRequestToTheSameBytes() {
    Bytes expected =
        new Bytes().string(1, "v1beta1").string(2, "a.sock").string(3, "example.com/a");

    byte[] actual =
        RegisterRequest.newBuilder()
            .setVersion("v1beta1")
            .setEndpoint("a.sock")
            .setResourceName("example.com/a")
            .build()
            .toByteArray();

    assertThat(actual).isEqualTo(expected.toByteArray());
  }

  /** A minimal protobuf writer: enough for tags, varints and length-delimited fields. */
  private static final class Bytes {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Bytes varint(int field, long value) {
      rawVarint((long) field << 3 | VARINT);
      rawVarint(value);
      return this;
    }

    Bytes string(int field, String value) {
      return bytes(field, value.getBytes(StandardCharsets.UTF_8));
    }

    Bytes message(int field, Bytes value) {
      return bytes(field, value.toByteArray());
    }

    private Bytes bytes(int field, byte[] value) {
      rawVarint((long) field << 3 | LEN);
      rawVarint(value.length);
      out.writeBytes(value);
      return this;
    }

    private void rawVarint(long value) {
      while ((value & ~0x7FL) != 0) {
        out.write((int) ((value & 0x7F) | 0x80));
        value >>>= 7;
      }
      out.write((int) value);
    }

    byte[] toByteArray() {
      return out.toByteArray();
    }
  }
}
